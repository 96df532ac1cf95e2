// A Kafka Streams word count for tests/server/apps.rs, run against kafka-server-start: lines of
// an input topic are split into lower-case words, regrouped by word (a repartition topic) and
// counted in a RocksDB store whose changelog is a compacted topic; each new count goes to the
// output topic as word -> count (String key, Long value).
//
// Usage: WordCount BOOTSTRAP APPLICATION_ID STATE_DIR INPUT OUTPUT [KEY=VALUE...]
// Extra KEY=VALUE pairs are StreamsConfig settings, except those starting with "changelog.",
// which are the store's changelog topic settings (the rest of the key).
//
// It says on stdout, one line each, what the test waits for: "state FROM -> TO" for every state
// change of the client, "restored STORE PARTITION N" when a store partition has been restored
// from its changelog with N records, "failed: ..." if a stream thread dies, "closed" once SIGTERM
// has closed it (leaving its group).

import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueStore;

public final class WordCount {
    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length < 5) {
            System.err.println("usage: WordCount BOOTSTRAP APPLICATION_ID STATE_DIR INPUT OUTPUT [KEY=VALUE...]");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[2]);
        Map<String, String> changelog = new HashMap<>();
        for (int i = 5; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq < 0) {
                System.err.println("not KEY=VALUE: " + args[i]);
                System.exit(2);
            }
            String key = args[i].substring(0, eq);
            String value = args[i].substring(eq + 1);
            if (key.startsWith("changelog.")) {
                changelog.put(key.substring("changelog.".length()), value);
            } else {
                props.put(key, value);
            }
        }

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(args[3], Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts")
                .withKeySerde(Serdes.String())
                .withValueSerde(Serdes.Long())
                .withLoggingEnabled(changelog))
            .toStream()
            .to(args[4], Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        CountDownLatch closed = new CountDownLatch(1);
        streams.setStateListener((to, from) -> {
            say("state " + from + " -> " + to);
            if (to == KafkaStreams.State.NOT_RUNNING || to == KafkaStreams.State.ERROR) {
                closed.countDown();
            }
        });
        streams.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(TopicPartition partition, String store, long start, long end) {
                say("restoring " + store + " " + partition.partition() + " from " + start + " to " + end);
            }

            @Override
            public void onBatchRestored(TopicPartition partition, String store, long end, long records) {
            }

            @Override
            public void onRestoreEnd(TopicPartition partition, String store, long total) {
                say("restored " + store + " " + partition.partition() + " " + total);
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            say("failed: " + e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        // Stopped for good: leave the group, so that the next instance is assigned at once
        // instead of after this member's session timeout (45 s), as on Kafka.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                .withTimeout(Duration.ofSeconds(30)));
            say("closed");
        }));
        streams.start();
        closed.await();
        if (streams.state() == KafkaStreams.State.ERROR) {
            System.exit(1);
        }
    }
}
