package toy;

import java.util.Properties;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;

/** Topology methods of every shape `--app-class CLASS#METHOD` takes, and some it refuses. */
public class Shapes {
    public Topology build() {  // an instance method, no argument
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream("shapes-in").to("shapes-out");
        return builder.build();
    }

    public static Topology buildTopology(Properties config) {  // the tutorials' shape
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(config.getProperty("toy.input", "shapes-in")).to("shapes-out");
        return builder.build();
    }

    public static String notATopology() {
        return "";
    }

    public static Topology takesAnInt(int n) {
        return new StreamsBuilder().build();
    }

    /** No no-argument constructor: its instance methods are refused. */
    public static class NeedsArgs {
        public NeedsArgs(int n) { }

        public Topology build() {
            return new StreamsBuilder().build();
        }
    }
}
