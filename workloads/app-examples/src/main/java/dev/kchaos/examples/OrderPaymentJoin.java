package dev.kchaos.examples;

import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.StreamJoined;

/**
 * A stream-stream join with a grace period, entered as the tutorials write it
 * (`buildTopology(Properties)`, `--app-class dev.kchaos.examples.OrderPaymentJoin#buildTopology`):
 * each payment joined with the orders of its key within ten minutes, a minute's grace for
 * late records. "orders" and "payments" (order id -> text) -> "paid-orders" (order id ->
 * "order|payment"). An inner join emits a result when its second side arrives, so a key's
 * results follow the order its records are processed in: the spec sends the orders first.
 */
public final class OrderPaymentJoin {
    public static final String ORDERS = "orders";
    public static final String PAYMENTS = "payments";
    public static final String PAID = "paid-orders";

    private OrderPaymentJoin() {}

    public static Topology buildTopology(Properties config) {
        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> orders = builder.stream(ORDERS, Consumed.with(Serdes.String(), Serdes.String()));
        KStream<String, String> payments = builder.stream(PAYMENTS, Consumed.with(Serdes.String(), Serdes.String()));
        orders.join(payments, (order, payment) -> order + "|" + payment,
                    JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMinutes(10), Duration.ofMinutes(1)),
                    StreamJoined.with(Serdes.String(), Serdes.String(), Serdes.String()))
            .to(PAID, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }
}
