package dev.kchaos.kstreams;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * What CaptureAgent's advice calls from inside KafkaStreams (so public): the Topology and
 * settings a user's main hands to the KafkaStreams constructor, recorded; the settings the
 * pod runs with given back; the run's listeners attached after construction. Static, as the
 * advice is: one app per JVM. OFF (the agent loaded, nothing asked) changes nothing.
 */
public final class Capture {
    private Capture() {}

    enum Mode {
        OFF,
        /** a pod: the app's KafkaStreams runs with the run's settings and listeners */
        RUN,
        /** describe: constructed with placeholder settings, start() skipped */
        DESCRIBE,
        /** reference: the app's thread parked at the constructor, nothing constructed */
        REFERENCE
    }

    private static final Object LOCK = new Object();
    private static volatile Mode mode = Mode.OFF;
    private static UnaryOperator<Properties> settings = UnaryOperator.identity();
    private static Consumer<KafkaStreams> attach = streams -> { };
    private static final List<Object> TOPOLOGIES = new ArrayList<>();  // distinct, in order
    private static final Set<Object> ATTACHED = Collections.newSetFromMap(new IdentityHashMap<>());
    private static Properties appConfig;
    private static KafkaStreams.StateListener runListener;
    private static StateRestoreListener runRestoreListener;
    private static Consumer<Throwable> runHandler;

    /** Before the app's main runs: what to do at its constructor. */
    static void arm(Mode how, UnaryOperator<Properties> given, Consumer<KafkaStreams> attached) {
        synchronized (LOCK) {
            settings = given;
            attach = attached;
            mode = how;
        }
    }

    /** How many distinct topologies reached a KafkaStreams constructor. */
    static int count() {
        synchronized (LOCK) {
            return TOPOLOGIES.size();
        }
    }

    static Topology topology() {
        synchronized (LOCK) {
            return TOPOLOGIES.isEmpty() ? null : (Topology) TOPOLOGIES.get(0);
        }
    }

    /** The first KafkaStreams' settings as the app built them (a copy). */
    static Properties appConfig() {
        synchronized (LOCK) {
            return appConfig;
        }
    }

    /** Waits until a topology is captured or the time is up; true if one was. */
    static boolean await(long untilNanos, Thread main) throws InterruptedException {
        synchronized (LOCK) {
            while (TOPOLOGIES.isEmpty() && main.isAlive()) {
                long left = (untilNanos - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    break;
                }
                LOCK.wait(Math.min(left, 100));
            }
            return !TOPOLOGIES.isEmpty();
        }
    }

    // ---- called from KafkaStreams (CaptureAgent's advice)

    public static Object entering(Object topology, Object config) {
        if (mode == Mode.OFF) {
            return config;
        }
        Properties asBuilt;
        synchronized (LOCK) {
            for (Object seen : TOPOLOGIES) {
                if (seen == topology) {
                    return config;  // a constructor delegating to another: seen at the first
                }
            }
            TOPOLOGIES.add(topology);
            asBuilt = properties(config);
            if (TOPOLOGIES.size() == 1) {
                appConfig = asBuilt;
            }
            LOCK.notifyAll();
            if (mode == Mode.RUN && TOPOLOGIES.size() > 1) {
                System.err.println("kchaos-app: the app's main built a second KafkaStreams: kchaos "
                                   + "runs an app with one (give --app-class CLASS#METHOD for the "
                                   + "topology to test)");
                Runtime.getRuntime().halt(2);
            }
        }
        if (mode == Mode.REFERENCE) {
            parkForever();
        }
        Properties effective = settings.apply(asBuilt);
        return config instanceof StreamsConfig ? new StreamsConfig(effective) : effective;
    }

    public static void constructed(Object streams) {
        if (mode != Mode.RUN) {
            return;
        }
        synchronized (LOCK) {
            if (!ATTACHED.add(streams)) {
                return;
            }
        }
        attach.accept((KafkaStreams) streams);
    }

    public static Object stateListener(Object appListener) {
        KafkaStreams.StateListener ours = runListener;
        if (mode != Mode.RUN || ours == null || appListener == null) {
            return appListener == null ? ours : appListener;
        }
        KafkaStreams.StateListener theirs = (KafkaStreams.StateListener) appListener;
        return (KafkaStreams.StateListener) (to, from) -> {
            ours.onChange(to, from);
            theirs.onChange(to, from);
        };
    }

    public static Object restoreListener(Object appListener) {
        StateRestoreListener ours = runRestoreListener;
        if (mode != Mode.RUN || ours == null || appListener == null) {
            return appListener == null ? ours : appListener;
        }
        return new ChainedRestoreListener(ours, (StateRestoreListener) appListener);
    }

    /** The run's restore listener first, then the app's. */
    private record ChainedRestoreListener(StateRestoreListener ours, StateRestoreListener theirs)
            implements StateRestoreListener {
        @Override
        public void onRestoreStart(TopicPartition tp, String store, long start, long end) {
            ours.onRestoreStart(tp, store, start, end);
            theirs.onRestoreStart(tp, store, start, end);
        }

        @Override
        public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long count) {
            ours.onBatchRestored(tp, store, batchEnd, count);
            theirs.onBatchRestored(tp, store, batchEnd, count);
        }

        @Override
        public void onRestoreEnd(TopicPartition tp, String store, long restored) {
            ours.onRestoreEnd(tp, store, restored);
            theirs.onRestoreEnd(tp, store, restored);
        }

        @Override
        public void onRestoreSuspended(TopicPartition tp, String store, long restored) {
            ours.onRestoreSuspended(tp, store, restored);
            theirs.onRestoreSuspended(tp, store, restored);
        }
    }

    public static Object handler(Object appHandler) {
        Consumer<Throwable> ours = runHandler;
        if (mode != Mode.RUN || ours == null || appHandler == null) {
            return appHandler;
        }
        StreamsUncaughtExceptionHandler theirs = (StreamsUncaughtExceptionHandler) appHandler;
        return (StreamsUncaughtExceptionHandler) e -> {
            ours.accept(e);
            return theirs.handle(e);
        };
    }

    public static boolean skipStart() {
        return mode == Mode.DESCRIBE;
    }

    /** Set by the pod once its own listener and handler are on the client: the app's, set
     * later, are chained behind them. */
    static void runListeners(KafkaStreams.StateListener listener, StateRestoreListener restore,
                             Consumer<Throwable> handler) {
        runListener = listener;
        runRestoreListener = restore;
        runHandler = handler;
    }

    static Properties properties(Object config) {
        Properties copy = new Properties();
        if (config instanceof StreamsConfig streamsConfig) {
            copy.putAll(streamsConfig.originals());
        } else if (config instanceof Properties given) {
            for (String name : given.stringPropertyNames()) {  // with defaults
                copy.put(name, given.getProperty(name));
            }
            for (Map.Entry<Object, Object> e : given.entrySet()) {  // and non-string values
                copy.put(e.getKey(), e.getValue());
            }
        }
        return copy;
    }

    private static void parkForever() {
        while (true) {
            try {
                Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException e) {
                // parked until the JVM ends
            }
        }
    }
}
