package dev.kchaos.kstreams;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;

/**
 * One pod of a Kafka Streams app, the ledger's (LedgerApp) or a user's (AppLauncher pod).
 * Settings: PodConfig's (kstreams-common), with the guarantee given (exactly_once_v2 by
 * default), the default state updater and static membership.
 */
final class Pod {
    private Pod() {}

    static Properties config(Flags f) {
        Properties p = PodConfig.shared(f, f.get("guarantee", "exactly_once_v2"),
                                        StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG,
                                        ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        // Passed only for the streams protocol (KIP-1071, 4.4 on: the harness refuses older
        // releases). Its standbys, session and heartbeat are the streams group's configs,
        // which the harness sets on the broker; the client-side ones above are ignored.
        if (f.has("group-protocol")) {
            p.put("group.protocol", f.get("group-protocol", "classic"));  // no constant before 4.1
        }
        return PodConfig.overrides(p, f);
    }

    /**
     * Runs the topology until SIGTERM (a clean close: returns 0) or until the client goes to
     * ERROR (returns 1 after closing it; the caller halts with it). With watchTasks, a
     * TaskWatch traces task-running/task-closed (for topologies whose processors do not).
     */
    static int run(Properties config, Trace trace, Topology topology, boolean watchTasks)
            throws InterruptedException {
        System.err.println(topology.describe());
        TopologyShape shape = TopologyShape.of(topology.describe());
        KafkaStreams streams = new KafkaStreams(topology, config);
        Listeners listeners = new Listeners(trace, shape);
        streams.setGlobalStateRestoreListener(listeners);
        streams.setStandbyUpdateListener(listeners);
        TaskWatch tasks = watchTasks ? new TaskWatch(streams, trace) : null;
        CountDownLatch done = new CountDownLatch(1);
        int[] exit = {0};
        streams.setStateListener((to, from) -> {
            boolean over = to == KafkaStreams.State.ERROR || to == KafkaStreams.State.NOT_RUNNING;
            if (tasks != null && over) {
                tasks.closeAll();  // before the client's state, as a processor's close would be
            }
            trace.emitAs("main", "client-state", "from", from.name(), "to", to.name());
            if (to == KafkaStreams.State.ERROR) {
                exit[0] = 1;
            }
            if (over) {
                done.countDown();
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            trace.emit("fatal", "error", e.getClass().getSimpleName() + ": " + e.getMessage());
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            done.countDown();
        }, "shutdown"));
        trace.emitAs("main", "client-state", "from", "CREATED", "to", "CREATED");
        streams.start();
        new CommitWatch(streams, trace).start();
        if (tasks != null) {
            tasks.start();
        }
        done.await();
        if (exit[0] != 0) {
            streams.close(Duration.ofSeconds(10));
        }
        return exit[0];
    }
}
