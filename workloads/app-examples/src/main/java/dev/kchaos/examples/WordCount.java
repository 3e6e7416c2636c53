package dev.kchaos.examples;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * The classic word count: "sentences" (words separated by spaces) -> lower-case words ->
 * re-keyed by word (a repartition topic) -> counted in the persistent store
 * "word-counts-store" -> "word-counts" (word -> count as text). It exists as the smallest
 * correct stateful app with two sub-topologies, an internal topic and a changelog: under
 * exactly-once every count a word reaches is emitted once, in order.
 */
public final class WordCount {
    public static final String SENTENCES = "sentences";
    public static final String COUNTS = "word-counts";
    public static final String STORE = "word-counts-store";

    private WordCount() {}

    public static Topology topology(Properties config) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(SENTENCES, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(WordCount::words)
            .groupBy((key, word) -> word, Grouped.with(Serdes.String(), Serdes.String()))
            .count(Materialized.<String, Long>as(Stores.persistentKeyValueStore(STORE))
                       .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
            .toStream()
            .mapValues(String::valueOf)
            .to(COUNTS, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }

    static List<String> words(String sentence) {
        if (sentence == null) {
            return List.of();
        }
        return Arrays.stream(sentence.toLowerCase(Locale.ROOT).split(" +"))
            .filter(word -> !word.isEmpty())
            .toList();
    }
}
