package toy;

import java.util.Properties;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;

/** Builds two KafkaStreams: refused. */
public final class Twice {
    public static void main(String[] args) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "toy-twice");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        for (String topic : new String[] {"a", "b"}) {
            StreamsBuilder builder = new StreamsBuilder();
            builder.stream(topic).to(topic + "-out");
            new KafkaStreams(builder.build(), props).start();
        }
    }
}
