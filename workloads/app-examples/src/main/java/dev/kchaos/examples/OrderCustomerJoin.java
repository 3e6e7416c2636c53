package dev.kchaos.examples;

import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A foreign-key table-table join: "orders" (order id -> "customer-N:amount") joined with
 * "customers" (customer id -> text) on the customer id inside the order's value, through
 * Kafka Streams' subscription and response topics. "order-customers" (order id ->
 * "amount|customer"). An order updated twice in quick succession may have its first
 * response dropped as stale (by design), which only a fault-free, in-order run would not
 * do: the spec gives each order one record, and sends the customers first.
 */
public final class OrderCustomerJoin {
    public static final String ORDERS = "fk-orders";
    public static final String CUSTOMERS = "customers";
    public static final String JOINED = "order-customers";

    private OrderCustomerJoin() {}

    public static Topology topology(Properties config) {
        StreamsBuilder builder = new StreamsBuilder();
        KTable<String, String> orders = builder.table(ORDERS, Consumed.with(Serdes.String(), Serdes.String()));
        KTable<String, String> customers = builder.table(CUSTOMERS, Consumed.with(Serdes.String(), Serdes.String()));
        orders.join(customers, order -> order.substring(0, order.indexOf(':')),
                    (order, customer) -> order.substring(order.indexOf(':') + 1) + "|" + customer)
            .toStream()
            .to(JOINED, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }
}
