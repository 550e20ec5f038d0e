package balancer

import (
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// requestSelector returns the subset req asks for: its context's
// selector, or else the one its RouteHeader names.
func requestSelector(req *http.Request) (Selector, bool) {
	if s, ok := SelectorFrom(req.Context()); ok {
		return s, true
	}
	if v := req.Header.Get(RouteHeader); v != "" {
		if s, err := ParseSelector(v); err == nil {
			return s, true
		}
	}
	return Selector{}, false
}

// selectSubset has try go to the instances of list (app's) that sel
// selects, when there are any.
func (c *HTTPClient) selectSubset(try *Retry, app string, list []*eureka.InstanceInfo, sel Selector) {
	key := app + " " + sel.String()
	sub := c.subsets.of(key, list, sel)
	if len(sub) == 0 {
		return // the app has no instance in the subset: any instance
	}
	try.list, try.Key = sub, key
	try.Source = subsetSource{src: c.Balancer.src, lists: &c.subsets, key: key, sel: sel}
}

// subsetLists keeps, per app and selector, the instances selected from
// the app's last list (Selected).
type subsetLists struct {
	m sync.Map     // key -> *Selected
	n atomic.Int64 // entries in m
}

// maxSubsetLists bounds the lists kept: selectors come from requests.
const maxSubsetLists = 1024

func (l *subsetLists) of(key string, list []*eureka.InstanceInfo, sel Selector) []*eureka.InstanceInfo {
	if v, ok := l.m.Load(key); ok {
		return v.(*Selected).Of(sel, list)
	}
	if l.n.Load() >= maxSubsetLists {
		return sel.Filter(list)
	}
	v, loaded := l.m.LoadOrStore(key, new(Selected))
	if !loaded {
		l.n.Add(1)
	}
	return v.(*Selected).Of(sel, list)
}

// subsetSource is the instances of one subset, for a Retry's Failed.
type subsetSource struct {
	src   Instancer
	lists *subsetLists
	key   string
	sel   Selector
}

func (s subsetSource) Instances(app string) []*eureka.InstanceInfo {
	return s.lists.of(s.key, s.src.Instances(app), s.sel)
}
