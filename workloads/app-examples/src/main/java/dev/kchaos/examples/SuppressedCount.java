package dev.kchaos.examples;

import java.time.Duration;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * A suppression (`--app-class dev.kchaos.examples.SuppressedCount#build`, an instance
 * method): clicks per user in tumbling 5 s windows with no grace, each window's final count
 * only, emitted when stream time passes its end. When a window closes depends on stream
 * time, which the cluster keeps per task: so does the reference (one TopologyTestDriver per
 * task), and the oracle judges it.
 */
public class SuppressedCount {
    public static final String FINAL = "final-clicks-per-window";

    public Topology build() {
        StreamsBuilder builder = new StreamsBuilder();
        Clicks.byUser(builder)
            .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofSeconds(5)))
            .count()
            .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
            .toStream()
            .map(Clicks::countAtStart)
            .to(FINAL, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }
}
