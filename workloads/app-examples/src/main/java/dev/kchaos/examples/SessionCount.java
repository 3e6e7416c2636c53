package dev.kchaos.examples;

import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;

/**
 * A session count with no grace: a user's clicks less than 2 s apart are one session, its
 * count updated with each click. A click that extends a session replaces it: the old
 * session's key gets a tombstone (null) and the new one its count, so a session's key goes
 * count, ..., null as it grows. "clicks" (Clicks: user -> page) -> "clicks-per-session"
 * (user@start-end -> count, or null when the session grew past it).
 */
public final class SessionCount {
    public static final String COUNTS = "clicks-per-session";

    private SessionCount() {}

    public static Topology topology(Properties config) {
        StreamsBuilder builder = new StreamsBuilder();
        Clicks.byUser(builder)
            .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(Duration.ofSeconds(2)))
            .count()
            .toStream()
            .map((window, count) -> KeyValue.pair(
                window.key() + "@" + window.window().start() + "-" + window.window().end(),
                count == null ? null : String.valueOf(count)))
            .to(COUNTS, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }
}
