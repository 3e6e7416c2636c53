package dev.kchaos.kstreams;

import static dev.kchaos.kstreams.AppLauncher.explain;

import dev.kchaos.kstreams.AppLauncher.Refused;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Properties;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;

/**
 * Where a user's app hands over its topology (docs/your-app.md):
 * <ul>
 * <li>`--app-class CLASS#METHOD`: a public method returning a Topology, static or on an
 *     instance made with the public no-argument constructor, taking a Properties (given the
 *     run's settings) or nothing. `--app-class CLASS` alone is `CLASS#topology`.
 * <li>`--app-main CLASS [--app-arg A ...]`: the app's own `public static void main`, run in a
 *     thread of its own; the KafkaStreams it builds is taken over (CaptureAgent, Capture).
 * </ul>
 */
final class AppEntry {
    static final long DEFAULT_CAPTURE_TIMEOUT_MS = 60_000;
    /** After the first KafkaStreams, how long describe watches for a second. */
    private static final long SETTLE_MS = 3_000;
    private static final long QUIET_MS = 400;

    final String appClass;
    final String appMain;
    final List<String> appArgs;
    final long captureTimeoutMs;

    AppEntry(String appClass, String appMain, List<String> appArgs, long captureTimeoutMs) {
        this.appClass = appClass;
        this.appMain = appMain;
        this.appArgs = List.copyOf(appArgs);
        this.captureTimeoutMs = captureTimeoutMs;
    }

    boolean isMain() {
        return appMain != null;
    }

    String name() {
        return isMain() ? appMain + ".main" : appClass;
    }

    /** The topology, and the settings describe or the reference builds it with. */
    record Captured(Topology topology, Properties config) { }

    static AppEntry parse(String appClass, String appMain, List<String> appArgs, String timeoutMs)
            throws Refused {
        if ((appClass == null) == (appMain == null)) {
            throw new Refused("give one of --app-class CLASS[#METHOD] and --app-main CLASS");
        }
        if (appMain == null && !appArgs.isEmpty()) {
            throw new Refused("--app-arg is for --app-main: a topology method takes no arguments");
        }
        long timeout;
        try {
            timeout = timeoutMs == null ? DEFAULT_CAPTURE_TIMEOUT_MS : Long.parseLong(timeoutMs);
        } catch (NumberFormatException e) {
            throw new Refused("--capture-timeout-ms wants milliseconds, got " + timeoutMs);
        }
        return new AppEntry(appClass, appMain, appArgs, timeout);
    }

    // ---- a topology method

    /** CLASS#METHOD's topology, given a copy of config, or why not. */
    Topology fromMethod(Properties config) throws Refused {
        int hash = appClass.indexOf('#');
        String className = hash < 0 ? appClass : appClass.substring(0, hash);
        String methodName = hash < 0 ? "topology" : appClass.substring(hash + 1);
        String shapes = "public method " + methodName + "(Properties) or " + methodName
            + "() returning org.apache.kafka.streams.Topology";
        if (className.isEmpty() || methodName.isEmpty()) {
            throw new Refused("--app-class " + appClass + ": give CLASS or CLASS#METHOD");
        }
        Class<?> cls = load(className);
        Method method = null;
        boolean named = false;
        for (Method candidate : cls.getMethods()) {
            if (!candidate.getName().equals(methodName)) {
                continue;
            }
            named = true;
            Class<?>[] params = candidate.getParameterTypes();
            boolean takes = params.length == 0 || (params.length == 1 && params[0] == Properties.class);
            if (takes && (method == null || params.length == 1)) {
                method = candidate;  // (Properties) preferred over ()
            }
        }
        if (method == null) {
            throw new Refused(className + (named ? "'s " + methodName + " takes other arguments: want a "
                                           : " has no ") + shapes);
        }
        if (!Topology.class.isAssignableFrom(method.getReturnType())) {
            throw new Refused(className + "#" + methodName + " returns " + method.getReturnType().getName()
                              + ", not this classpath's org.apache.kafka.streams.Topology: return the "
                              + "app's Topology and do not bundle kafka-streams in the app's jar");
        }
        Object target = null;
        if (!Modifier.isStatic(method.getModifiers())) {
            target = instance(cls, className, methodName);
        }
        Properties given = new Properties();
        given.putAll(config);
        Object topology;
        try {
            topology = method.getParameterCount() == 0 ? method.invoke(target) : method.invoke(target, given);
        } catch (IllegalAccessException e) {
            throw new Refused(className + " must be a public class with a " + shapes);
        } catch (InvocationTargetException e) {
            throw new Refused(className + "#" + methodName + " threw " + explain(e.getCause())
                              + ": fix the app's topology method");
        } catch (LinkageError e) {
            throw new Refused(className + "#" + methodName + " could not run (" + e
                              + "): put the jars it needs on the classpath");
        }
        if (topology == null) {
            throw new Refused(className + "#" + methodName + " returned null: return the app's Topology");
        }
        return (Topology) topology;
    }

    private static Object instance(Class<?> cls, String className, String methodName) throws Refused {
        Constructor<?> constructor;
        try {
            constructor = cls.getConstructor();
        } catch (NoSuchMethodException e) {
            throw new Refused(className + "#" + methodName + " is an instance method and " + className
                              + " has no public no-argument constructor: add one, or make the method static");
        }
        try {
            return constructor.newInstance();
        } catch (InvocationTargetException e) {
            throw new Refused("new " + className + "() threw " + explain(e.getCause()));
        } catch (ReflectiveOperationException e) {
            throw new Refused("new " + className + "() failed: " + e + " (is the class public and concrete?)");
        }
    }

    static Class<?> load(String className) throws Refused {
        try {
            return Class.forName(className);
        } catch (ClassNotFoundException e) {
            throw new Refused("no class " + className + " on the classpath: give the class's full name "
                              + "and put the app's jar (with the jars it needs) on the classpath");
        } catch (LinkageError e) {
            throw new Refused("class " + className + " could not be loaded (" + e
                              + "): put the jars it needs on the classpath");
        }
    }

    // ---- the app's main

    /**
     * Runs the app's main with Capture armed `how`, until its first KafkaStreams is
     * constructed (or the time is up, or main ends first: refused). `settings` turns the
     * app's settings into those the KafkaStreams is built with (not used by REFERENCE).
     * Returns the thread main runs in.
     */
    Thread startMain(Capture.Mode how, UnaryOperator<Properties> settings,
                     Consumer<KafkaStreams> attach)
            throws Refused, InterruptedException {
        Class<?> cls = load(appMain);
        Method main;
        try {
            main = cls.getMethod("main", String[].class);
        } catch (NoSuchMethodException e) {
            throw new Refused(appMain + " has no public static void main(String[]): give the class "
                              + "whose main starts the app, or --app-class CLASS#METHOD");
        }
        if (!Modifier.isStatic(main.getModifiers())) {
            throw new Refused(appMain + ".main is not static: give the class whose main starts the app");
        }
        if (Capture.count() != 0) {
            throw new Refused("a KafkaStreams was built before " + appMain + ".main ran");
        }
        Capture.arm(how, settings, attach);
        Throwable[] failed = {null};
        String[] args = appArgs.toArray(new String[0]);
        Thread thread = new Thread(() -> {
            try {
                main.invoke(null, (Object) args);
            } catch (InvocationTargetException e) {
                failed[0] = e.getCause();
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                failed[0] = e;
            }
        }, "app-main");
        thread.setDaemon(true);  // the launcher decides when the JVM ends
        thread.start();
        long until = System.nanoTime() + captureTimeoutMs * 1_000_000;
        if (!Capture.await(until, thread)) {
            thread.join(200);
            if (failed[0] != null) {
                throw new Refused(appMain + ".main threw " + explain(failed[0])
                                  + " before building a KafkaStreams");
            }
            if (!thread.isAlive()) {
                throw new Refused(appMain + ".main returned without building a KafkaStreams: give "
                                  + "the class whose main starts the app, or --app-class CLASS#METHOD");
            }
            throw new Refused(appMain + ".main built no KafkaStreams within "
                              + captureTimeoutMs / 1000 + " s: give the class whose main starts the "
                              + "app (and its --app-args), or --app-class CLASS#METHOD");
        }
        return thread;
    }

    /** describe: after the first KafkaStreams, main runs on (start() skipped) until it ends
     * or waits, to see whether it builds another; more than one is refused. */
    static void settle(Thread main, String appMain) throws Refused, InterruptedException {
        long until = System.nanoTime() + SETTLE_MS * 1_000_000;
        long quietSince = -1;
        while (main.isAlive() && System.nanoTime() < until) {
            Thread.State state = main.getState();
            boolean waiting = state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
            if (!waiting) {
                quietSince = -1;
            } else if (quietSince < 0) {
                quietSince = System.nanoTime();
            } else if (System.nanoTime() - quietSince > QUIET_MS * 1_000_000) {
                break;
            }
            Thread.sleep(50);
        }
        if (Capture.count() > 1) {
            throw new Refused(appMain + ".main built " + Capture.count() + " KafkaStreams: kchaos runs "
                              + "an app with one (give --app-class CLASS#METHOD for the topology to test)");
        }
    }

    /** The app's settings with `owned` over them (a copy): what describe and the reference
     * build with. */
    static Properties over(Properties app, Properties owned) {
        Properties merged = new Properties();
        merged.putAll(app);
        merged.putAll(owned);
        return merged;
    }
}
