package dev.kchaos.examples;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * A deliberately broken app: a per-key click counter ("clicks", Clicks -> "click-counts", key ->
 * running count as text) whose counts live in a plain HashMap of the processor, outside
 * Kafka Streams' state stores. Nothing is logged to a changelog or restored, so the counts
 * are lost when a task moves to another pod or a pod restarts: the counting starts again at
 * 1, and the oracle must flag the changed values. In a fault-free run on a stable assignment
 * it is correct, so it shows that the faults, not the input, expose the bug.
 */
public final class InMemoryCounter {
    public static final String COUNTS = "click-counts";

    private InMemoryCounter() {}

    public static Topology topology(Properties config) {
        StreamsBuilder builder = new StreamsBuilder();
        Clicks.stream(builder)
            .process(Counter::new)
            .to(COUNTS, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }

    /** One per task (a new map each): the bug is that the map is not a state store. */
    static final class Counter implements Processor<String, String, String, String> {
        private final Map<String, Long> counts = new HashMap<>();
        private ProcessorContext<String, String> context;

        @Override
        public void init(ProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(Record<String, String> record) {
            long count = counts.merge(record.key(), 1L, Long::sum);
            context.forward(record.withValue(Long.toString(count)));
        }
    }
}
