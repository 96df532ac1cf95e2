// kafkajs against kafka-server-start: create a topic, produce keyed records with headers
// (acks=-1, gzip) in batches, then print the topic's end offsets as `partition:offset` lines.
//
// Usage: node produce.js BOOTSTRAP TOPIC COUNT
const { Kafka, CompressionTypes, logLevel } = require("kafkajs");

async function main() {
  const [bootstrap, topic, countText] = process.argv.slice(2);
  const count = Number(countText);
  const kafka = new Kafka({ clientId: "kafkit-test", brokers: [bootstrap], logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (let start = 0; start < count; start += 100) {
    const messages = [];
    for (let i = start; i < Math.min(count, start + 100); i++) {
      messages.push({ key: `k${i}`, value: `v${i}`, headers: { h: `x${i}` } });
    }
    await producer.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages });
  }
  await producer.disconnect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  offsets.sort((a, b) => a.partition - b.partition);
  for (const o of offsets) console.log(`${o.partition}:${o.high}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
