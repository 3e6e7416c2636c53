package dev.kchaos.kstreams;

import static dev.kchaos.kstreams.AppLauncher.*;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * The reference's input: one file per input partition (`sources.json` names them: topic,
 * partition, file), each that partition's committed records in offset order, written by
 * checker/oracle/reference.py. A task's partitions are merged as Kafka Streams' PartitionGroup
 * merges them: always the partition whose next record has the lowest timestamp, each
 * partition in offset order. Equal timestamps go by topic name, ascending or descending (the
 * cluster's choice among them is its own: the two reference orders take the two ends).
 */
final class ReferenceFeed {
    private ReferenceFeed() {}

    record Source(String topic, int partition, Path file) { }

    /** One input record, where it came from and its place in its file. */
    record Fed(Source source, long offset, long timestamp, byte[] key, byte[] value) { }

    static List<Source> sources(Path dir) throws Refused, IOException {
        Path manifest = dir.resolve("sources.json");
        if (!Files.isRegularFile(manifest)) {
            throw new Refused("--input " + dir + " has no sources.json: give the folder "
                              + "checker/oracle/reference.py writes");
        }
        List<Source> sources = new ArrayList<>();
        for (JsonNode node : JSON.readTree(manifest.toFile())) {
            sources.add(new Source(node.get("topic").asText(), node.get("partition").asInt(),
                                   dir.resolve(node.get("file").asText())));
        }
        return sources;
    }

    /** Records of SOURCES merged by their next record's timestamp. */
    static final class Merge implements AutoCloseable {
        private final PriorityQueue<Cursor> heads;
        private final List<Cursor> open = new ArrayList<>();

        Merge(List<Source> sources, boolean topicsDescending) throws Refused, IOException {
            Comparator<String> topics = topicsDescending ? Comparator.reverseOrder() : Comparator.naturalOrder();
            heads = new PriorityQueue<>(Comparator.<Cursor>comparingLong(c -> c.head.timestamp())
                .thenComparing(c -> c.source.topic(), topics)
                .thenComparingInt(c -> c.source.partition()));
            for (Source source : sources) {
                Cursor cursor = new Cursor(source);
                open.add(cursor);
                if (cursor.advance()) {
                    heads.add(cursor);
                }
            }
        }

        /** The next record, without taking it; null at the end. */
        Fed peek() {
            Cursor first = heads.peek();
            return first == null ? null : first.head;
        }

        Fed next() throws Refused, IOException {
            Cursor first = heads.poll();
            if (first == null) {
                return null;
            }
            Fed taken = first.head;
            if (first.advance()) {
                heads.add(first);
            }
            return taken;
        }

        @Override
        public void close() {
            for (Cursor cursor : open) {
                cursor.close();
            }
        }
    }

    private static final class Cursor {
        final Source source;
        private final BufferedReader reader;
        private long line;
        Fed head;

        Cursor(Source source) throws IOException {
            this.source = source;
            this.reader = Files.newBufferedReader(source.file(), StandardCharsets.UTF_8);
        }

        boolean advance() throws Refused, IOException {
            String text;
            do {
                text = reader.readLine();
                line++;
            } while (text != null && text.isBlank());
            if (text == null) {
                head = null;
                return false;
            }
            try {
                JsonNode record = JSON.readTree(text);
                head = new Fed(source, record.get("offset").asLong(), record.get("timestamp").asLong(),
                               bytes(record.get("key")), bytes(record.get("value")));
            } catch (Exception e) {
                throw new Refused(source.file() + " line " + line + " is not a record "
                                  + "{offset, timestamp, key, value}: " + e);
            }
            return true;
        }

        void close() {
            try {
                reader.close();
            } catch (IOException ignored) {
                // read to its end or given up: nothing to keep
            }
        }

        private static byte[] bytes(JsonNode node) {
            return node == null || node.isNull() ? null : Base64.getDecoder().decode(node.asText());
        }
    }
}
