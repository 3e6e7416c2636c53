package toy;

/** A main that builds no KafkaStreams: returns at once, or with an argument waits forever. */
public final class Idle {
    public static void main(String[] args) throws InterruptedException {
        if (args.length > 0) {
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
