package dev.kchaos.kstreams;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.apache.kafka.streams.TopologyDescription;

/**
 * What a topology reads, writes and keeps, from its TopologyDescription: what `AppLauncher
 * describe` prints, what the reference drains, and which sub-topology a store's task is in
 * (the `task` of restore and standby events). A sink topic that is also a source topic is
 * internal (a DSL repartition or foreign-key topic: Kafka Streams creates it), and in neither
 * `sources` nor `sinks`.
 */
final class TopologyShape {
    final SortedSet<String> sources = new TreeSet<>();
    final SortedSet<String> globalSources = new TreeSet<>();
    final SortedSet<String> sinks = new TreeSet<>();
    final SortedSet<String> internal = new TreeSet<>();
    final SortedSet<String> sourcePatterns = new TreeSet<>();
    final SortedSet<String> stores = new TreeSet<>();
    final SortedSet<String> globalStores = new TreeSet<>();
    final Map<String, Integer> storeSubtopology = new HashMap<>();
    boolean dynamicSinks;
    int subtopologies;
    private Pattern[] patterns = new Pattern[0];

    static TopologyShape of(TopologyDescription description) {
        TopologyShape shape = new TopologyShape();
        for (TopologyDescription.Subtopology sub : description.subtopologies()) {
            shape.subtopologies++;
            for (TopologyDescription.Node node : sub.nodes()) {
                if (node instanceof TopologyDescription.Source source) {
                    if (source.topicSet() != null) {
                        shape.sources.addAll(source.topicSet());
                    }
                    if (source.topicPattern() != null) {
                        shape.sourcePatterns.add(source.topicPattern().pattern());
                    }
                } else if (node instanceof TopologyDescription.Sink sink) {
                    if (sink.topic() != null) {
                        shape.sinks.add(sink.topic());
                    } else {
                        shape.dynamicSinks = true;
                    }
                } else if (node instanceof TopologyDescription.Processor processor) {
                    for (String store : processor.stores()) {
                        shape.stores.add(store);
                        shape.storeSubtopology.put(store, sub.id());
                    }
                }
            }
        }
        for (TopologyDescription.GlobalStore global : description.globalStores()) {
            if (global.source().topicSet() != null) {
                shape.globalSources.addAll(global.source().topicSet());
            }
            shape.globalStores.addAll(global.processor().stores());
        }
        shape.internal.addAll(shape.sinks);
        shape.internal.retainAll(shape.sources);
        shape.sources.removeAll(shape.internal);
        shape.sinks.removeAll(shape.internal);
        shape.patterns = shape.sourcePatterns.stream().map(Pattern::compile).toArray(Pattern[]::new);
        return shape;
    }

    /** Whether records of this topic go into the topology (a source, global or by pattern). */
    boolean reads(String topic) {
        if (sources.contains(topic) || globalSources.contains(topic)) {
            return true;
        }
        for (Pattern pattern : patterns) {
            if (pattern.matcher(topic).matches()) {
                return true;
            }
        }
        return false;
    }

    /** The task of a store's changelog partition: "<sub-topology>_<partition>" ("0_p" when
     * the store is unknown). */
    String task(String store, int partition) {
        return storeSubtopology.getOrDefault(store, 0) + "_" + partition;
    }

    boolean isGlobalTopic(String topic) {
        return globalSources.contains(topic);
    }

    Map<String, Object> json() {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("sources", sources);
        doc.put("global_sources", globalSources);
        doc.put("sinks", sinks);
        doc.put("dynamic_sinks", dynamicSinks);
        doc.put("source_patterns", sourcePatterns);
        doc.put("stores", stores);
        doc.put("subtopologies", subtopologies);
        doc.put("internal", internal);
        doc.put("global_stores", globalStores);
        Map<String, Integer> where = new LinkedHashMap<>();
        for (String store : stores) {
            where.put(store, storeSubtopology.get(store));
        }
        doc.put("store_subtopologies", where);
        return doc;
    }
}
