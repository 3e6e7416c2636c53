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

    @Override
    public void run() {
        while (!isInterrupted()) {
            for (Map.Entry<MetricName, ? extends Metric> e : streams.metrics().entrySet()) {
                MetricName name = e.getKey();
                if (!name.name().equals("commit-total") || !name.group().equals("stream-thread-metrics")) {
                    continue;
                }
                String thread = Trace.shortThread(name.tags().getOrDefault("thread-id", "?"));
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
