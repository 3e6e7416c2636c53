package dev.kchaos.examples;

import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * A hopping count with no grace, as the docs recommend writing windows: clicks per user in
 * 10 s windows advancing by 5 s (each click counts in two), `ofSizeWithNoGrace`. A record
 * whose windows its task's stream time has passed is dropped, so which records count depends
 * on the order within each task, and on nothing else: the oracle judges it against one
 * reference driver per task. "clicks" (Clicks: user -> page) -> "clicks-per-hop"
 * (user@windowStart -> count).
 */
public final class HoppingCount {
    public static final String COUNTS = "clicks-per-hop";

    private HoppingCount() {}

    public static Topology topology(Properties config) {
        StreamsBuilder builder = new StreamsBuilder();
        Clicks.byUser(builder)
            .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofSeconds(10))
                            .advanceBy(Duration.ofSeconds(5)))
            .count()
            .toStream()
            .map(Clicks::countAtStart)
            .to(COUNTS, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }
}
