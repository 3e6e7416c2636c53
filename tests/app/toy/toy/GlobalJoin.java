package toy;

import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.Produced;

/** Orders joined with a global table of customers (tests/app/test_app_capture.py): every
 * task sees the whole table. "toy-orders" (order -> customer), "toy-customers" (customer ->
 * name) -> "toy-named" (order -> name). */
public final class GlobalJoin {
    private GlobalJoin() {}

    public static Topology topology(Properties config) {
        StreamsBuilder builder = new StreamsBuilder();
        GlobalKTable<String, String> customers = builder.globalTable(
            "toy-customers", Consumed.with(Serdes.String(), Serdes.String()));
        builder.stream("toy-orders", Consumed.with(Serdes.String(), Serdes.String()))
            .join(customers, (order, customer) -> customer, (customer, name) -> name)
            .to("toy-named", Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }
}
