package dev.lakestream.reader;

/**
 * What computing a delta took.
 *
 * @param from the older version
 * @param to the newer version
 * @param snapshots main snapshots in the range (after {@code from}, up to {@code to})
 * @param appendOnly the range deleted nothing: the rows of the added files were streamed as they are
 * @param rowsAdded rows emitted with weight +1
 * @param rowsRemoved rows emitted with weight -1
 * @param rowsCancelled rows read on both sides that netted to zero (moved by a compaction, or updated to the same values)
 * @param filesRead data files read (each once)
 * @param buckets hash buckets the rows were consolidated in, one at a time (more than one when the
 *     rows to consolidate exceed the memory budget: then spilled to local files by bucket)
 * @param durationMs wall time
 */
public record DeltaStats(
    long from,
    long to,
    int snapshots,
    boolean appendOnly,
    long rowsAdded,
    long rowsRemoved,
    long rowsCancelled,
    int filesRead,
    int buckets,
    long durationMs) {}
