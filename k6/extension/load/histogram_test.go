package load

import (
	"math/rand"
	"testing"
)

// Summarize's maximum is the quantile 100, which the quick scan finds: it
// must be what Max() walks every count for.
func TestSummarizeMaxIsTheHistogramsMax(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	for n := range 200 {
		h := newHDR()
		for range 1 + rng.Intn(2000) {
			v := int64(histMin + rng.ExpFloat64()*float64(int64(1)<<rng.Intn(30)))
			_ = h.RecordValue(min(v, histMax))
		}
		if got, want := Summarize(h).Max, float64(h.Max())/1000; got != want {
			t.Fatalf("histogram %d: Summarize's max %v ms, Max() %v ms", n, got, want)
		}
	}
}

// A second's report reads each histogram's summaries several times: they are
// computed once, at collect, and a second with no record keeps the total's.
func TestSnapshotIsTheLastCollectsSummary(t *testing.T) {
	s := newShardedHist()
	if w, tot := s.snapshot(); w.Count != 0 || tot.Count != 0 {
		t.Fatalf("nothing recorded: %+v %+v", w, tot)
	}
	s.record(0, 1_000_000)
	s.record(1, 2_000_000)
	if w, _ := s.snapshot(); w.Count != 0 {
		t.Fatalf("before collect: %+v", w)
	}
	s.collect()
	w, tot := s.snapshot()
	if w.Count != 2 || tot.Count != 2 || w.Max != 2 || tot.Min != 1 {
		t.Fatalf("after collect: %+v %+v", w, tot)
	}
	s.collect()
	w, tot = s.snapshot()
	if w.Count != 0 || tot.Count != 2 || tot.Max != 2 {
		t.Fatalf("a quiet second: %+v %+v", w, tot)
	}
	s.record(0, 1_500_000)
	s.collect()
	if w, tot = s.snapshot(); w.Count != 1 || tot.Count != 3 || tot.Max != 2 || w.Min != 1.5 {
		t.Fatalf("the next second: %+v %+v", w, tot)
	}
}

// Pub-to-sub is recorded once, by flow; the run's histogram is the flows'
// sum. Collected while records go on, from the reporter and the end of the
// run at once, it must lose and count twice nothing.
func TestRunsLatencyIsItsFlowsSumHoweverCollectsInterleave(t *testing.T) {
	r := NewRun()
	flows := []*shardedHist{r.flowHists.get("p2p"), r.flowHists.get("fan-out")}
	const perFlow = 20_000
	done := make(chan struct{})
	for f, h := range flows {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range perFlow {
				h.record(i, int64(1+f)*1_000_000)
			}
		}()
	}
	collecting := make(chan struct{})
	for range 2 { // the reporter's, and the end of the run's (Totals)
		go func() {
			defer func() { collecting <- struct{}{} }()
			for range 2000 {
				_ = r.Totals()
			}
		}()
	}
	<-done
	<-done
	<-collecting
	<-collecting
	got := r.Totals()[HistNames()[Latency]]
	if got.Count != 2*perFlow || got.Min != 1 || got.Max != 2 {
		t.Fatalf("run's pub-to-sub: %+v, want %d records of 1 and 2 ms", got, 2*perFlow)
	}
	hists, err := r.Histograms()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{HistNames()[Latency], FlowHistName("p2p"), FlowHistName("fan-out")} {
		if hists[name] == "" {
			t.Errorf("%s missing from the result's histograms", name)
		}
	}
}
