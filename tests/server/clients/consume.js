// kafkajs consumer group against kafka-server-start: joins GROUP, reads COUNT messages of
// TOPIC from the beginning, commits, prints them sorted (`key=value` lines) and leaves.
//
// Usage: node consume.js BOOTSTRAP TOPIC GROUP COUNT
const { Kafka, logLevel } = require("kafkajs");

async function main() {
  const [bootstrap, topic, groupId, countText] = process.argv.slice(2);
  const count = Number(countText);
  const kafka = new Kafka({ clientId: "kafkit-test", brokers: [bootstrap], logLevel: logLevel.ERROR });
  const consumer = kafka.consumer({ groupId });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${seen.length} of ${count} in 60 s`)), 60000);
    consumer
      .run({
        eachMessage: async ({ message }) => {
          seen.push(`${message.key}=${message.value}`);
          if (seen.length === count) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  // eachMessage commits (autoCommit) on the next poll or at disconnect.
  await consumer.disconnect();
  seen.sort();
  for (const line of seen) console.log(line);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
