package dev.kchaos.kstreams;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.streams.TopologyDescription;

/**
 * Which of the reference's TopologyTestDrivers an input record goes to. The cluster keeps
 * stream time per task (a sub-topology's partition p of each topic it reads); a driver runs
 * every sub-topology as one task, so one driver per task keeps the cluster's stream time:
 * the driver of task s_p gets partition p of the topics sub-topology s reads, and every
 * global topic's records (each task sees the whole global store).
 *
 * That holds only while every record a task processes comes from its own input partitions.
 * A repartition topic (or a foreign-key join's, or any topic the topology writes and reads
 * back) carries each upstream task's output to the downstream task its new key names, and
 * inside a driver it goes back into the same driver: the downstream task would see only
 * its upstream partition's share. Such a topology runs in one driver, as before, and the
 * oracle judges it only where the two orders agree.
 */
final class ReferenceTasks {
    static final String ONE = "all";  // the task of every record when one driver runs them all

    final boolean perTask;
    final String oneDriverWhy;  // why one driver runs everything; null when per task
    private final Map<String, Integer> subtopologyOf = new HashMap<>();
    private final TopologyShape shape;

    private ReferenceTasks(TopologyShape shape, String oneDriverWhy) {
        this.shape = shape;
        this.oneDriverWhy = oneDriverWhy;
        this.perTask = oneDriverWhy == null;
    }

    static ReferenceTasks of(TopologyDescription description, TopologyShape shape, boolean oneAsked) {
        String why = null;
        if (oneAsked) {
            why = "one driver was asked for (--drivers one)";
        } else if (!shape.internal.isEmpty()) {
            why = "the topology re-keys through " + (shape.internal.size() == 1 ? "topic " : "topics ")
                + String.join(", ", shape.internal)
                + ", so a downstream task reads what every upstream task wrote";
        } else if (!shape.sourcePatterns.isEmpty()) {
            why = "the topology reads topics by pattern";
        }
        ReferenceTasks tasks = new ReferenceTasks(shape, why);
        for (TopologyDescription.Subtopology sub : description.subtopologies()) {
            for (TopologyDescription.Node node : sub.nodes()) {
                if (node instanceof TopologyDescription.Source source && source.topicSet() != null) {
                    for (String topic : source.topicSet()) {
                        tasks.subtopologyOf.put(topic, sub.id());
                    }
                }
            }
        }
        return tasks;
    }

    boolean isGlobal(String topic) {
        return shape.isGlobalTopic(topic);
    }

    /** The task of a record of TOPIC's PARTITION: "<sub-topology>_<partition>" as Kafka
     * Streams names it, ONE with one driver; null for a global topic (every task's). */
    String task(String topic, int partition) {
        if (isGlobal(topic)) {
            return null;
        }
        if (!perTask) {
            return ONE;
        }
        return subtopologyOf.getOrDefault(topic, 0) + "_" + partition;
    }

    /** Tasks in Kafka Streams' order: by sub-topology, then partition. */
    static int compare(String a, String b) {
        if (a.equals(b)) {
            return 0;
        }
        String[] x = a.split("_");
        String[] y = b.split("_");
        if (x.length != 2 || y.length != 2) {
            return a.compareTo(b);
        }
        int bySub = Integer.compare(Integer.parseInt(x[0]), Integer.parseInt(y[0]));
        return bySub != 0 ? bySub : Integer.compare(Integer.parseInt(x[1]), Integer.parseInt(y[1]));
    }
}
