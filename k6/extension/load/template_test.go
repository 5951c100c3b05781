package load

import "testing"

// Templates render every placeholder; an unknown one is refused.
func TestTemplatesRenderEveryPlaceholder(t *testing.T) {
	tp, err := ParseTemplate("$share/g{i/100}/test/{i%5}/{clientid}/{vu}")
	if err != nil {
		t.Fatal(err)
	}
	got := tp.render(tplVars{i: 1234, clientID: "c", vu: 7})
	if got != "$share/g12/test/4/c/7" {
		t.Fatalf("got %q", got)
	}
	if _, err := ParseTemplate("test/{x}"); err == nil {
		t.Fatal("unknown placeholder accepted")
	}
}
