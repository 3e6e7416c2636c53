package dev.kchaos.kstreams;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.streams.KafkaStreams;

/**
 * Kafka Streams has no commit callback: each stream thread's `commit-total` metric is polled
 * and every rise is traced as `txn-commit` (under exactly-once a commit is a transaction
 * commit) with `source` "metric", so triggers that wait for commits work on this app.
 * The metric's home moved in 2.5 (KIP-444): group `stream-thread-metrics`, tag `thread-id`
 * from 2.5 on; group `stream-metrics`, tag `client-id` (the thread's name) before.
 */
final class CommitWatch extends Thread {
    private static final long PERIOD_MS = 50;
    private final KafkaStreams streams;
    private final Trace trace;
    private final Map<String, Double> seen = new HashMap<>();

    CommitWatch(KafkaStreams streams, Trace trace) {
        super("commit-watch");
        setDaemon(true);
        this.streams = streams;
        this.trace = trace;
    }

    /** The stream thread a thread-level `commit-total` belongs to, or null for any other. */
    static String threadOf(MetricName name) {
        if (!name.name().equals("commit-total")) {
            return null;
        }
        if (name.group().equals("stream-thread-metrics")) {
            return name.tags().getOrDefault("thread-id", "?");
        }
        if (name.group().equals("stream-metrics") && name.tags().containsKey("client-id")) {
            return name.tags().get("client-id");
        }
        return null;
    }

    @Override
    public void run() {
        while (!isInterrupted()) {
            for (Map.Entry<MetricName, ? extends Metric> e : streams.metrics().entrySet()) {
                String owner = threadOf(e.getKey());
                if (owner == null) {
                    continue;
                }
                String thread = Trace.shortThread(owner);
                double total = ((Number) e.getValue().metricValue()).doubleValue();
                Double before = seen.put(thread, total);
                if (before != null && total > before) {
                    trace.emitAs(thread, "txn-commit", "source", "metric",
                                 "commits", (long) (total - before));
                }
            }
            try {
                Thread.sleep(PERIOD_MS);
            } catch (InterruptedException ie) {
                return;
            }
        }
    }
}
