package dev.kchaos.examples.spring;

import java.util.Arrays;
import java.util.Locale;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.EnableKafkaStreams;

/**
 * A word count as a Spring Boot service: "sentences" -> lower-case words -> re-keyed by word
 * -> counted in "word-counts-store" -> "word-counts" (word -> count as text). spring-kafka's
 * StreamsBuilderFactoryBean builds the StreamsBuilder this bean adds to and constructs the
 * KafkaStreams from spring.kafka.streams.* (application.properties) when the context starts.
 */
@SpringBootApplication
@EnableKafkaStreams
public class SpringWordCount {

    public static void main(String[] args) {
        SpringApplication.run(SpringWordCount.class, args);
    }

    @Bean
    public KStream<String, String> wordCounts(StreamsBuilder builder) {
        KStream<String, String> sentences = builder.stream("sentences");
        sentences
            .flatMapValues(s -> Arrays.asList(s.toLowerCase(Locale.ROOT).split(" +")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word, Grouped.with(Serdes.String(), Serdes.String()))
            .count(Materialized.as("word-counts-store"))
            .toStream()
            .mapValues(String::valueOf)
            .to("word-counts", Produced.with(Serdes.String(), Serdes.String()));
        return sentences;
    }
}
