"""kafka-python against kafka-server-start: create a topic, produce keyed records with headers
(acks=all, gzip), read them back by assigning every partition, and print them sorted, one
`key=value header=value` line each, for the test to compare.

Usage: roundtrip.py BOOTSTRAP TOPIC COUNT
"""

import sys

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])

admin = KafkaAdminClient(bootstrap_servers=bootstrap)
admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
admin.close()

producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", compression_type="gzip")
for i in range(count):
    producer.send(topic, key=b"k%d" % i, value=b"v%d" % i, headers=[("h", b"x%d" % i)])
producer.flush()
producer.close()

consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                         consumer_timeout_ms=10000)
partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic))]
consumer.assign(partitions)
consumer.seek_to_beginning(*partitions)
lines = []
for record in consumer:
    headers = " ".join(f"{k}={v.decode()}" for k, v in record.headers)
    lines.append(f"{record.key.decode()}={record.value.decode()} {headers}")
    if len(lines) == count:
        break
consumer.close()
print("\n".join(sorted(lines)))
