package toy;

import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/** A running total per task emitted each second of stream time, as WordCountProcessorDemo
 * emits its counts: what it emits depends on where the cluster punctuates
 * (tests/app/test_app_capture.py). "numbers" -> "totals". */
public final class Punctuating {
    private Punctuating() {}

    public static Topology topology(Properties config) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream("numbers", Consumed.with(Serdes.String(), Serdes.String()))
            .process(Totals::new, Named.as("every-second"))
            .to("totals", Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }

    static final class Totals implements Processor<String, String, String, String> {
        private long total;

        @Override
        public void init(ProcessorContext<String, String> context) {
            context.schedule(Duration.ofSeconds(1), PunctuationType.STREAM_TIME,
                             time -> context.forward(new Record<>("total", Long.toString(total), time)));
        }

        @Override
        public void process(Record<String, String> record) {
            total += Long.parseLong(record.value());
        }
    }
}
