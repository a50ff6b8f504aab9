package dev.lakestream.sync.cycle;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.lakestream.common.event.ConvertGroup;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.DataFileJson;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConvertGroupsTest {

  private static final long MB = 1L << 20;

  @Test
  void scannedFilesArePackedUpToTheGroupsBytesAndEveryTaskIsSentOnceInOrder() {
    List<ConvertTask> tasks = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      tasks.add(task("f" + i, 30 * MB));
    }
    List<ConvertGroup> groups = ConvertGroups.pack(tasks, 100 * MB, 500);
    assertThat(groups).extracting(g -> g.tasks().size()).containsExactly(3, 3, 3, 1);
    assertThat(groups.stream().flatMap(g -> g.tasks().stream()).toList())
        .as("the tasks of all groups")
        .isEqualTo(tasks);
    assertThat(groups).extracting(ConvertGroup::key).containsExactly("f0", "f3", "f6", "f9");
  }

  @Test
  void aFileLargerThanTheGroupBytesIsAGroupOfItsOwn() {
    List<ConvertGroup> groups = ConvertGroups.pack(
        List.of(task("small", MB), task("huge", 500 * MB), task("next", MB)), 100 * MB, 500);
    assertThat(groups).extracting(g -> g.tasks().size()).containsExactly(1, 1, 1);
  }

  @Test
  void tasksTheKeyIndexResolvedReadNothingAndFillGroupsUpToTheFileLimit() {
    List<ConvertTask> tasks = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      tasks.add(task("f" + i, 900 * MB).withPositions(List.of(1L)));
    }
    assertThat(ConvertGroups.pack(tasks, 100 * MB, 3))
        .extracting(g -> g.tasks().size())
        .containsExactly(3, 3, 1);
    assertThat(ConvertGroups.pack(tasks, 100 * MB, 500)).hasSize(1);
    assertThat(ConvertGroups.pack(List.of(), 100 * MB, 500)).isEmpty();
  }

  @Test
  void manyResolvedPositionsCloseAGroupBeforeItsRecordGrowsLarge() {
    List<Long> positions = new ArrayList<>();
    for (long p = 0; p < 60_000; p++) {
      positions.add(p);
    }
    List<ConvertTask> tasks = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      tasks.add(task("f" + i, MB).withPositions(positions));
    }
    List<ConvertGroup> groups = ConvertGroups.pack(tasks, 100 * MB, 500);
    assertThat(groups).hasSizeGreaterThan(1);
    for (ConvertGroup g : groups) {
      long bytes = g.tasks().stream().mapToLong(ConvertGroups::recordBytes).sum();
      assertThat(bytes).isLessThanOrEqualTo(ConvertGroups.MAX_RECORD_BYTES);
    }
  }

  private static ConvertTask task(String path, long bytes) {
    var json = JsonNodeFactory.instance
        .objectNode()
        .put("file-path", path)
        .put("file-size-in-bytes", bytes);
    return new ConvertTask("db.t", "cycle-1", new DataFileJson(json), null, List.of());
  }
}
