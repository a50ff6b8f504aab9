#!/usr/bin/env python3
"""Wall-clock profile of Kafka Streams threads: where they are, running or waiting.

JDK Flight Recorder samples only threads that run Java code, so a thread waiting on the broker,
a transaction commit or Iceberg's worker pool is invisible to it. This samples every stream
thread's stack with jstack at a fixed period and counts, per application, the share of samples in
each stage (the first rule that matches a stack wins).

  stream_thread_stacks.py sample PID OUT.json [PERIOD_S]   # until the JVM exits
  stream_thread_stacks.py report OUT.json
"""
import collections
import json
import re
import subprocess
import sys
import time

STAGES = [
    ("Kafka Streams starting", ["initTransactions", "InternalTopicManager", "StreamsPartitionAssignor"]),
    ("realtime commit (Iceberg)", ["RealtimeCommitter"]),
    ("Parquet writer setup (Hadoop Configuration)", ["org.apache.hadoop.conf.Configuration"]),
    ("flush: decode again", ["BatchFlusher.flush(", "DebeziumDecoder"]),
    ("flush: rows, keys, Parquet", ["BatchFlusher", "BatchWriter"]),
    ("flush: other", ["ChangeBuffer.flush"]),
    ("buffer: state store and its changelog", ["Batches.", "MeteredKeyValueStore"]),
    ("admit: decode", ["Admission.admit", "DebeziumDecoder"]),
    ("admit: convert, table", ["Admission.admit"]),
    ("source fence", ["SourceFence"]),
    ("process: other", ["ChangeBuffer.process"]),
    ("exactly-once commit (Kafka transaction)", ["StreamThread.maybeCommit"]),
    ("poll: waiting for records", ["pollPhase", "pollRequests"]),
]


def stage(frames):
    text = "\n".join(frames)
    for name, needles in STAGES:
        # a stage named "x: decode ..." needs all its needles, the others any
        if ("decode" in name and all(n in text for n in needles)) or (
                "decode" not in name and any(n in text for n in needles)):
            return name
    return "other"


def sample(pid, out, period):
    samples = []
    while True:
        try:
            dump = subprocess.run(["jstack", pid], capture_output=True, text=True, timeout=30).stdout
        except (subprocess.SubprocessError, OSError):
            break
        if not dump:
            break
        for block in dump.split("\n\n"):
            lines = block.strip().split("\n")
            match = re.match(r'"([^"]+)"', lines[0]) if lines else None
            if match and re.search(r"StreamThread-\d+$", match.group(1)):
                frames = [l.strip()[3:] for l in lines if l.strip().startswith("at ")]
                samples.append({"thread": match.group(1), "frames": frames})
        with open(out, "w") as f:
            json.dump(samples, f)
        time.sleep(period)


def report(path):
    runs = collections.defaultdict(list)
    for s in json.load(open(path)):
        thread = s.get("thread", s.get("name"))
        if re.search(r"StreamThread-\d+$", thread):
            runs[re.sub(r"-[0-9a-f-]{36}-StreamThread-\d+$", "", thread)].append(s)
    for app, samples in sorted(runs.items()):
        counts = collections.Counter(stage(s["frames"]) for s in samples)
        print(f"{app}: {len(samples)} samples")
        for name, n in counts.most_common():
            print(f"  {100.0 * n / len(samples):5.1f}%  {name}")


if __name__ == "__main__":
    if sys.argv[1] == "sample":
        sample(sys.argv[2], sys.argv[3], float(sys.argv[4]) if len(sys.argv) > 4 else 0.2)
    else:
        report(sys.argv[2])
