// Command franz runs franz-go (the Go Kafka client) against a server: it creates a topic with
// kadm, produces keyed records with headers through idempotent producers in every codec, reads
// them back partition by partition, then as a classic consumer group and as a group of the new
// protocol (KIP-848, assigned by the server), each committing, and checks with kadm that the
// committed offsets are the ones it read. It prints a summary on stdout and
// exits 1 on the first mismatch, saying what differed.
//
// Usage: franz BOOTSTRAP TOPIC GROUP COUNT
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const partitions = 3

// The codecs the records are split across, one producer (and so one producer id) each.
var codecs = []struct {
	name  string
	codec kgo.CompressionCodec
}{
	{"none", kgo.NoCompression()},
	{"gzip", kgo.GzipCompression()},
	{"snappy", kgo.SnappyCompression()},
	{"lz4", kgo.Lz4Compression()},
	{"zstd", kgo.ZstdCompression()},
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "franz: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 5 {
		fail("usage: franz BOOTSTRAP TOPIC GROUP COUNT")
	}
	bootstrap, topic, group := os.Args[1], os.Args[2], os.Args[3]
	count, err := strconv.Atoi(os.Args[4])
	if err != nil || count < len(codecs) {
		fail("COUNT must be a number of at least %d, not %q", len(codecs), os.Args[4])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	admin := newClient(bootstrap)
	defer admin.Close()
	adm := kadm.NewClient(admin)
	if _, err := adm.CreateTopic(ctx, partitions, 1, nil, topic); err != nil {
		fail("kadm CreateTopic %s: %v", topic, err)
	}
	fmt.Printf("created %s with %d partitions\n", topic, partitions)

	produce(ctx, bootstrap, topic, count)
	ends := endOffsets(ctx, adm, topic, count)
	readByPartition(ctx, bootstrap, topic, count)
	read := readAsGroup(ctx, bootstrap, topic, group, count, func() {})
	checkCommitted(ctx, adm, topic, group, read, ends, "classic")

	// The same through the server-side assignment of KIP-848 (franz-go's ServerSideBalancer,
	// the range assignor).
	group848 := group + "-848"
	read = readAsGroup(ctx, bootstrap, topic, group848, count,
		func() { checkAssigned(ctx, adm, topic, group848) },
		kgo.Balancers(kgo.RangeBalancer()), kgo.ServerSideBalancer())
	checkCommitted(ctx, adm, topic, group848, read, ends, "consumer")
}

// checkAssigned describes a KIP-848 group with kadm while its one member is in it: the server
// gave it every partition with the range assignor.
func checkAssigned(ctx context.Context, adm *kadm.Client, topic, group string) {
	described, err := adm.DescribeConsumerGroups(ctx, group)
	if err == nil {
		err = described.Error()
	}
	if err != nil {
		fail("kadm DescribeConsumerGroups %s: %v", group, err)
	}
	g := described[group]
	if g.State != "Stable" || g.AssignorName != "range" || len(g.Members) != 1 {
		fail("group %s: state %q, assignor %q, %d members", group, g.State, g.AssignorName, len(g.Members))
	}
	m := g.Members[0]
	if m.MemberType != 1 || len(m.Assignment[topic]) != partitions || m.MemberEpoch < 1 {
		fail("group %s: member type %d at epoch %d assigned %v", group, m.MemberType, m.MemberEpoch, m.Assignment)
	}
	fmt.Printf("kadm: group %s is %s, assignor %s, its member at epoch %d has all %d partitions\n",
		group, g.State, g.AssignorName, m.MemberEpoch, partitions)
}

func newClient(bootstrap string, opts ...kgo.Opt) *kgo.Client {
	opts = append([]kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.ClientID("franz-test")}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		fail("kgo.NewClient: %v", err)
	}
	return cl
}

// key, value and header of record i: what every reader checks against.
func record(i int) (string, string, string) {
	return fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i), fmt.Sprintf("x%d", i)
}

// produce sends the records split across one idempotent producer per codec, each share in one
// ProduceSync so that every partition gets batches of several records.
func produce(ctx context.Context, bootstrap, topic string, count int) {
	share := count / len(codecs)
	var summary []string
	for c, codec := range codecs {
		from, to := c*share, (c+1)*share
		if c == len(codecs)-1 {
			to = count
		}
		cl := newClient(bootstrap, kgo.ProducerBatchCompression(codec.codec), kgo.ProducerLinger(50*time.Millisecond))
		var records []*kgo.Record
		for i := from; i < to; i++ {
			k, v, h := record(i)
			records = append(records, &kgo.Record{
				Topic:   topic,
				Key:     []byte(k),
				Value:   []byte(v),
				Headers: []kgo.RecordHeader{{Key: "h", Value: []byte(h)}, {Key: "codec", Value: []byte(codec.name)}},
			})
		}
		results := cl.ProduceSync(ctx, records...)
		if err := results.FirstErr(); err != nil {
			fail("produce (%s): %v", codec.name, err)
		}
		for _, r := range results {
			if r.Record.ProducerID < 0 {
				fail("produce (%s): record %s has no producer id: not idempotent", codec.name, r.Record.Key)
			}
		}
		cl.Close()
		summary = append(summary, fmt.Sprintf("%s %d", codec.name, to-from))
	}
	fmt.Printf("produced %d records, idempotent (%s)\n", count, strings.Join(summary, ", "))
}

// endOffsets lists the end offsets with kadm; they must add up to what was produced.
func endOffsets(ctx context.Context, adm *kadm.Client, topic string, count int) map[int32]int64 {
	listed, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		fail("kadm ListEndOffsets: %v", err)
	}
	ends := map[int32]int64{}
	var total int64
	listed.Each(func(o kadm.ListedOffset) {
		ends[o.Partition] = o.Offset
		total += o.Offset
	})
	if len(ends) != partitions || total != int64(count) {
		fail("end offsets %v add up to %d over %d partitions, not %d over %d", ends, total, len(ends), count, partitions)
	}
	fmt.Printf("end offsets %s\n", partitionList(ends))
	return ends
}

// poll reads until count records have come, checking each against what was produced, and
// returns the next offset to read in each partition.
func poll(ctx context.Context, cl *kgo.Client, count int, what string) map[int32]int64 {
	seen := make(map[string]bool, count)
	next := map[int32]int64{}
	for len(seen) < count {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			fail("%s: %d of %d records read before the deadline", what, len(seen), count)
		}
		fetches.EachError(func(t string, p int32, err error) {
			fail("%s: fetching %s-%d: %v", what, t, p, err)
		})
		fetches.EachRecord(func(r *kgo.Record) {
			checkRecord(r, seen, next, what)
		})
	}
	return next
}

// checkRecord fails on a record that was not produced, came twice or out of order.
func checkRecord(r *kgo.Record, seen map[string]bool, next map[int32]int64, what string) {
	key := string(r.Key)
	i, err := strconv.Atoi(strings.TrimPrefix(key, "k"))
	if err != nil || seen[key] {
		fail("%s: unexpected or repeated key %q at %d in partition %d", what, key, r.Offset, r.Partition)
	}
	_, v, h := record(i)
	if string(r.Value) != v || len(r.Headers) != 2 || r.Headers[0].Key != "h" || string(r.Headers[0].Value) != h {
		fail("%s: record %s reads as value %q headers %v", what, key, r.Value, r.Headers)
	}
	if r.Offset != next[r.Partition] {
		fail("%s: partition %d jumped from %d to %d", what, r.Partition, next[r.Partition], r.Offset)
	}
	if r.ProducerID < 0 {
		fail("%s: record %s lost its producer id", what, key)
	}
	seen[key] = true
	next[r.Partition] = r.Offset + 1
}

// readByPartition assigns every partition directly, from the start.
func readByPartition(ctx context.Context, bootstrap, topic string, count int) {
	assigned := map[int32]kgo.Offset{}
	for p := int32(0); p < partitions; p++ {
		assigned[p] = kgo.NewOffset().AtStart()
	}
	cl := newClient(bootstrap, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assigned}))
	defer cl.Close()
	next := poll(ctx, cl, count, "by partition")
	fmt.Printf("read by partition: %d records, keys, values and headers as produced, next %s\n", count, partitionList(next))
}

// readAsGroup joins a group (classic, with the client-side balancers, unless opts say
// otherwise), reads everything, runs check while still a member, commits and leaves; returns
// what it read up to in each partition.
func readAsGroup(ctx context.Context, bootstrap, topic, group string, count int, check func(), opts ...kgo.Opt) map[int32]int64 {
	opts = append([]kgo.Opt{
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}, opts...)
	cl := newClient(bootstrap, opts...)
	next := poll(ctx, cl, count, "group "+group)
	check()
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		fail("group %s: commit: %v", group, err)
	}
	// Close leaves the group.
	cl.Close()
	fmt.Printf("group %s read %d records and committed %s\n", group, count, partitionList(next))
	return next
}

// checkCommitted fetches the group's offsets with kadm: they must be what the group read, which
// is every partition's end; the group must be empty once its member left.
func checkCommitted(ctx context.Context, adm *kadm.Client, topic, group string, read, ends map[int32]int64, kind string) {
	fetched, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		fail("kadm FetchOffsets %s: %v", group, err)
	}
	committed := map[int32]int64{}
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			fail("kadm FetchOffsets %s: %s-%d: %v", group, o.Topic, o.Partition, o.Err)
		}
		if o.Topic == topic {
			committed[o.Partition] = o.At
		}
	})
	if partitionList(committed) != partitionList(read) || partitionList(read) != partitionList(ends) {
		fail("group %s: committed %s, read %s, ends %s", group, partitionList(committed), partitionList(read), partitionList(ends))
	}
	described, err := adm.DescribeGroups(ctx, group)
	if err == nil {
		err = described.Error()
	}
	if err != nil {
		fail("kadm DescribeGroups %s: %v", group, err)
	}
	g := described[group]
	if g.State != "Empty" || len(g.Members) != 0 {
		fail("group %s after leaving: state %q, %d members", group, g.State, len(g.Members))
	}
	fmt.Printf("kadm: %s group %s committed %s, the end of every partition; state %s\n", kind, group, partitionList(committed), g.State)
}

// partitionList is "0:12 1:9 2:14", in partition order.
func partitionList(offsets map[int32]int64) string {
	var ps []int
	for p := range offsets {
		ps = append(ps, int(p))
	}
	sort.Ints(ps)
	var parts []string
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("%d:%d", p, offsets[int32(p)]))
	}
	return strings.Join(parts, " ")
}
