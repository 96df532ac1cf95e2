import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka's Java transactional producer and read_committed consumer (kafka-clients 4.3.1), driven
 * by tests/server/transactions.rs against kafka-server-start.
 *
 * <pre>
 * TxnClient produce BOOTSTRAP TXN_ID ROUNDS TOPIC_A TOPIC_B GROUP
 *     ROUNDS transactions, even ones committed and odd ones aborted. Each sends a record to
 *     each of TOPIC_A's three partitions and one to TOPIC_B, values "c-ROUND-N" (committed) or
 *     "a-ROUND-N" (aborted), and commits GROUP's offset of TOPIC_A-0 at ROUND + 1 in the
 *     transaction. Prints "done".
 * TxnClient consume BOOTSTRAP COUNT TOPIC...
 *     Reads every partition of the topics from the beginning with isolation.level
 *     read_committed until COUNT records came (or 60 s passed), and prints each value.
 * TxnClient zombie BOOTSTRAP TXN_ID TOPIC
 *     A producer opens a transaction; a second one with the same transactional id starts; the
 *     first one's commit must fail as fenced. Prints "fenced", and the second one's record is
 *     committed.
 * </pre>
 */
public class TxnClient {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "produce" -> produce(args[1], args[2], Integer.parseInt(args[3]), args[4], args[5], args[6]);
            case "consume" -> consume(args[1], Integer.parseInt(args[2]), List.of(args).subList(3, args.length));
            case "zombie" -> zombie(args[1], args[2], args[3]);
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    static KafkaProducer<String, String> producer(String bootstrap, String txnId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    static void produce(String bootstrap, String txnId, int rounds, String a, String b, String group) {
        try (KafkaProducer<String, String> producer = producer(bootstrap, txnId)) {
            producer.initTransactions();
            for (int round = 0; round < rounds; round++) {
                boolean commit = round % 2 == 0;
                String tag = (commit ? "c-" : "a-") + round + "-";
                producer.beginTransaction();
                for (int partition = 0; partition < 3; partition++) {
                    producer.send(new ProducerRecord<>(a, partition, null, tag + partition));
                }
                producer.send(new ProducerRecord<>(b, 0, null, tag + 3));
                Map<TopicPartition, OffsetAndMetadata> offsets =
                    Map.of(new TopicPartition(a, 0), new OffsetAndMetadata(round + 1));
                producer.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata(group));
                if (commit) {
                    producer.commitTransaction();
                } else {
                    producer.abortTransaction();
                }
            }
        }
        System.out.println("done");
    }

    static void consume(String bootstrap, int count, List<String> topics) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> all = new ArrayList<>();
            for (String topic : topics) {
                consumer.partitionsFor(topic).forEach(i -> all.add(new TopicPartition(topic, i.partition())));
            }
            consumer.assign(all);
            consumer.seekToBeginning(all);
            List<String> values = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 60_000;
            while (values.size() < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
            }
            // A little longer: anything past COUNT would be a record that should not be read.
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                values.add(r.value());
            }
            Collections.sort(values);
            values.forEach(System.out::println);
        }
    }

    static void zombie(String bootstrap, String txnId, String topic) throws Exception {
        KafkaProducer<String, String> old = producer(bootstrap, txnId);
        old.initTransactions();
        old.beginTransaction();
        old.send(new ProducerRecord<>(topic, 0, null, "zombie")).get();
        try (KafkaProducer<String, String> fresh = producer(bootstrap, txnId)) {
            fresh.initTransactions();
            try {
                old.commitTransaction();
                System.out.println("not fenced");
            } catch (ProducerFencedException | InvalidProducerEpochException e) {
                System.out.println("fenced");
            } finally {
                old.close(Duration.ZERO);
            }
            fresh.beginTransaction();
            fresh.send(new ProducerRecord<>(topic, 0, null, "fresh"));
            fresh.commitTransaction();
        }
    }
}
