package dev.kchaos.examples;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * A windowed aggregation, written as applications are: its main builds the topology and its
 * settings (exactly-once, String serdes) and starts KafkaStreams (`--app-main`). Clicks per
 * user in tumbling 10 s windows, with a grace of a day: no record of a run is ever late, so
 * each window's count goes 1, 2, 3, ... whatever the order of the partitions, and the oracle
 * judges it. "clicks" (Clicks: user -> page) -> "clicks-per-window" (user@windowStart -> count).
 */
public final class WindowedCount {
    public static final String COUNTS = "clicks-per-window";

    private WindowedCount() {}

    public static Topology topology() {
        StreamsBuilder builder = new StreamsBuilder();
        Clicks.byUser(builder)
            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofDays(1)))
            .count()
            .toStream()
            .map(Clicks::countAtStart)
            .to(COUNTS, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }

    public static void main(String[] args) throws InterruptedException {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "windowed-count");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args.length > 0 ? args[0] : "localhost:9092");
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        KafkaStreams streams = new KafkaStreams(topology(), props);
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            closed.countDown();
        }, "windowed-count-shutdown"));
        streams.start();
        closed.await();
    }
}
