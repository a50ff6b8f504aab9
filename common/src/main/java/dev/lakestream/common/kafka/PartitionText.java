package dev.lakestream.common.kafka;

import java.util.function.BiFunction;

/**
 * A string made from a topic and a partition (a state-store prefix, a map key), remembered for the
 * last partition asked for: a task's records come in runs of one partition, so most calls build no
 * string, and the one returned keeps its hash. Not thread-safe: one per task.
 */
public final class PartitionText {

  private final BiFunction<String, Integer, String> make;
  private String topic;
  private int partition = -1;
  private String text;

  public PartitionText(BiFunction<String, Integer, String> make) {
    this.make = make;
  }

  public String of(String topic, int partition) {
    if (partition != this.partition || !topic.equals(this.topic)) {
      text = make.apply(topic, partition);
      this.topic = topic;
      this.partition = partition;
    }
    return text;
  }
}
