import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Kafka's Java share consumer (kafka-clients 4.3.1) with explicit acknowledgement, driven by
 * tests/server/share.rs against kafka-server-start.
 *
 * <pre>
 * ShareClient BOOTSTRAP GROUP TOPIC IDLE_MS
 *     Joins share group GROUP on TOPIC, prints each record's value as it comes, acknowledges it
 *     (ACCEPT) and commits the acknowledgements after each poll; stops once no record came for
 *     IDLE_MS after the first one (or after 60 s without any).
 * </pre>
 */
public class ShareClient {
    public static void main(String[] args) {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[1]);
        props.put("share.acknowledgement.mode", "explicit");
        props.put("max.poll.records", "5");
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        long idleMs = Long.parseLong(args[3]);
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props)) {
            consumer.subscribe(List.of(args[2]));
            long last = System.currentTimeMillis();
            boolean any = false;
            while (System.currentTimeMillis() - last < (any ? idleMs : 60_000)) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<String, String> record : records) {
                    System.out.println(record.value());
                    consumer.acknowledge(record, AcknowledgeType.ACCEPT);
                }
                if (!records.isEmpty()) {
                    consumer.commitSync();
                    System.out.flush();
                    last = System.currentTimeMillis();
                    any = true;
                }
            }
        }
    }
}
