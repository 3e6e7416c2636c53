package toy;

import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/** Two sub-topologies that share nothing (tests/app/test_app_capture.py): "left" ->
 * "left-out" and "right" -> "right-out", so a partition has a task in each. */
public final class TwoStreams {
    private TwoStreams() {}

    public static Topology topology(Properties config) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream("left", Consumed.with(Serdes.String(), Serdes.String()))
            .to("left-out", Produced.with(Serdes.String(), Serdes.String()));
        builder.stream("right", Consumed.with(Serdes.String(), Serdes.String()))
            .to("right-out", Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }
}
