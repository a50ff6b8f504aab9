package dev.lakestream.reader;

/**
 * A version of a table: a snapshot of its {@code main} branch.
 *
 * @param snapshotId the version id (snapshot ids are not ordered; ranges go through main's ancestry)
 * @param sequenceNumber the snapshot's sequence number (ordered along main)
 * @param committedAtMs when it was committed
 * @param schemaId the schema its rows are in
 * @param maxSourceTsMs the newest source commit time it covers, or -1 when not recorded
 */
public record Version(
    long snapshotId, long sequenceNumber, long committedAtMs, int schemaId, long maxSourceTsMs) {}
