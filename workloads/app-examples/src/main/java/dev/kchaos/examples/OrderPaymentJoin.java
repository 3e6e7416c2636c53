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
 * A stream-stream join, each payment joined with the orders of its key (order id -> text)
 * as "order|payment", in two windows, one entry method each:
 * <ul>
 * <li>`buildTopology(Properties)`, as the tutorials write it (`--app-class
 *     dev.kchaos.examples.OrderPaymentJoin#buildTopology`): within ten minutes, a minute's
 *     grace for late records. "orders" and "payments" -> "paid-orders". An inner join emits
 *     a result when its second side arrives, so a key's results follow the order its records
 *     are processed in: the spec (order-payment-join.yaml) sends the orders first.
 * <li>`withNoGrace(Properties)`: at most 10 s apart, no grace
 *     (`JoinWindows.ofTimeDifferenceWithNoGrace`). Both sides arrive during the run; once a
 *     task's stream time is more than the window past a record, the record can no longer
 *     join, so the results depend on the order within each task. "match-orders" and
 *     "match-payments" -> "matched-payments" (payment-match.yaml).
 * </ul>
 */
public final class OrderPaymentJoin {
    public static final String ORDERS = "orders";
    public static final String PAYMENTS = "payments";
    public static final String PAID = "paid-orders";
    public static final String MATCH_ORDERS = "match-orders";
    public static final String MATCH_PAYMENTS = "match-payments";
    public static final String MATCHED = "matched-payments";

    private OrderPaymentJoin() {}

    public static Topology buildTopology(Properties config) {
        return join(ORDERS, PAYMENTS, PAID,
                    JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMinutes(10), Duration.ofMinutes(1)));
    }

    public static Topology withNoGrace(Properties config) {
        return join(MATCH_ORDERS, MATCH_PAYMENTS, MATCHED,
                    JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofSeconds(10)));
    }

    static Topology join(String ordersTopic, String paymentsTopic, String joinedTopic,
                         JoinWindows window) {
        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> orders = builder.stream(ordersTopic, Consumed.with(Serdes.String(), Serdes.String()));
        KStream<String, String> payments = builder.stream(paymentsTopic, Consumed.with(Serdes.String(), Serdes.String()));
        orders.join(payments, (order, payment) -> order + "|" + payment, window,
                    StreamJoined.with(Serdes.String(), Serdes.String(), Serdes.String()))
            .to(joinedTopic, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }
}
