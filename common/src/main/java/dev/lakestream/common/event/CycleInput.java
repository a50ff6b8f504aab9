package dev.lakestream.common.event;

/**
 * What reaches sync's cycle coordinator: a realtime commit (a trigger), a convert result, a key
 * index answer, or a record that could not be read as any of them (dead-lettered).
 */
public sealed interface CycleInput
    permits RealtimeCommitted, ConvertResult, IndexResult, Unreadable {}
