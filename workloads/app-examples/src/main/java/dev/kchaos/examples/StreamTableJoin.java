package dev.kchaos.examples;

import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * A stream-table join: each order of "orders" (key customer id) joined with the customer's
 * current value in the table "customers" (a persistent store "customers-store"), written to
 * "enriched-orders" as "order|customer"; an order whose customer is not in the table yet is
 * dropped (an inner join). It exists for the state a table keeps of another topic: what an
 * order is joined with depends on the table's restored state and on the relative order of
 * the two topics, which restarts and task moves must not change beyond what timestamps allow.
 */
public final class StreamTableJoin {
    public static final String CUSTOMERS = "customers";
    public static final String ORDERS = "orders";
    public static final String ENRICHED = "enriched-orders";
    public static final String STORE = "customers-store";

    private StreamTableJoin() {}

    public static Topology topology(Properties config) {
        StreamsBuilder builder = new StreamsBuilder();
        KTable<String, String> customers = builder.table(
            CUSTOMERS, Consumed.with(Serdes.String(), Serdes.String()),
            Materialized.<String, String>as(Stores.persistentKeyValueStore(STORE))
                .withKeySerde(Serdes.String()).withValueSerde(Serdes.String()));
        builder.stream(ORDERS, Consumed.with(Serdes.String(), Serdes.String()))
            .join(customers, (order, customer) -> order + "|" + customer,
                  Joined.with(Serdes.String(), Serdes.String(), Serdes.String()))
            .to(ENRICHED, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }
}
