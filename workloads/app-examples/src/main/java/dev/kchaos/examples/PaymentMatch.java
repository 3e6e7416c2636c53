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
 * A stream-stream join with no grace: each payment matched with its order when the two are
 * at most 10 s apart (`JoinWindows.ofTimeDifferenceWithNoGrace`). Both sides arrive during
 * the run; once a task's stream time is more than the window past a record, the record can
 * no longer join, so the results depend on the order within each task. "match-orders" and
 * "match-payments" (order id -> text) -> "matched-payments" (order id -> "order|payment").
 */
public final class PaymentMatch {
    public static final String ORDERS = "match-orders";
    public static final String PAYMENTS = "match-payments";
    public static final String MATCHED = "matched-payments";

    private PaymentMatch() {}

    public static Topology topology(Properties config) {
        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> orders = builder.stream(ORDERS, Consumed.with(Serdes.String(), Serdes.String()));
        KStream<String, String> payments = builder.stream(PAYMENTS, Consumed.with(Serdes.String(), Serdes.String()));
        orders.join(payments, (order, payment) -> order + "|" + payment,
                    JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofSeconds(10)),
                    StreamJoined.with(Serdes.String(), Serdes.String(), Serdes.String()))
            .to(MATCHED, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }
}
