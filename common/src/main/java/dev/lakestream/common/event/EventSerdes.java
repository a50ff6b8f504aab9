package dev.lakestream.common.event;

import java.util.function.Function;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/** Kafka serdes for the events that cross topics, in their versioned JSON form. */
public final class EventSerdes {

  private EventSerdes() {}

  public static Serde<FilesWritten> filesWritten() {
    return of(FilesWritten::toJson, FilesWritten::fromJson);
  }

  public static Serde<RealtimeCommitted> realtimeCommitted() {
    return of(RealtimeCommitted::toJson, RealtimeCommitted::fromJson);
  }

  public static Serde<ConvertTask> convertTask() {
    return of(ConvertTask::toJson, ConvertTask::fromJson);
  }

  public static Serde<ConvertGroup> convertGroup() {
    return of(ConvertGroup::toJson, ConvertGroup::fromJson);
  }

  public static Serde<ConvertResult> convertResult() {
    return of(ConvertResult::toJson, ConvertResult::fromJson);
  }

  public static Serde<CyclePlan> cyclePlan() {
    return of(CyclePlan::toJson, CyclePlan::fromJson);
  }

  public static Serde<IndexLookup> indexLookup() {
    return of(IndexLookup::toJson, IndexLookup::fromJson);
  }

  public static Serde<IndexResult> indexResult() {
    return of(IndexResult::toJson, IndexResult::fromJson);
  }

  public static Serde<MainCommitted> mainCommitted() {
    return of(MainCommitted::toJson, MainCommitted::fromJson);
  }

  /** The JSON of any event of this package (for a dead-letter record of an event already read). */
  public static byte[] json(Object event) {
    if (event instanceof byte[] bytes) {
      return bytes;
    } else if (event instanceof Unreadable e) {
      return e.value();
    } else if (event instanceof FilesWritten e) {
      return e.toJson();
    } else if (event instanceof RealtimeCommitted e) {
      return e.toJson();
    } else if (event instanceof ConvertTask e) {
      return e.toJson();
    } else if (event instanceof ConvertGroup e) {
      return e.toJson();
    } else if (event instanceof ConvertResult e) {
      return e.toJson();
    } else if (event instanceof CyclePlan e) {
      return e.toJson();
    } else if (event instanceof IndexLookup e) {
      return e.toJson();
    } else if (event instanceof IndexResult e) {
      return e.toJson();
    } else if (event instanceof MainCommitted e) {
      return e.toJson();
    }
    throw new IllegalArgumentException("not an event: " + event.getClass().getName());
  }

  private static <T> Serde<T> of(Function<T, byte[]> write, Function<byte[], T> read) {
    Serializer<T> serializer = (topic, value) -> value == null ? null : write.apply(value);
    Deserializer<T> deserializer = (topic, bytes) -> bytes == null ? null : read.apply(bytes);
    return Serdes.serdeFrom(serializer, deserializer);
  }
}
