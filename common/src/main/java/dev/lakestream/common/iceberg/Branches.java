package dev.lakestream.common.iceberg;

/** The two branches of every pipeline table. */
public final class Branches {

  /** Written by ingest: data files plus equality deletes, seconds behind the source. */
  public static final String REALTIME = "realtime";

  /** Written by sync: the same data files with deletion vectors only; what engines read. */
  public static final String MAIN = "main";

  private Branches() {}
}
