package replication

import (
	"errors"
	"net/http"
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

// Apply applies one replicated operation exactly as the single
// endpoint would with the replication header, and returns the per-item
// status code of Eureka's PeerReplicationResource.
func Apply(s *registry.Store, it Item) Result {
	app := strings.ToUpper(it.AppName)
	switch it.Action {
	case ActionRegister:
		if it.Instance != nil {
			// 200 even if invalid, as Eureka; 410 if this node saw it
			// cancelled after it was made: the sender missed the cancel.
			if errors.Is(s.Register(it.Instance, true), registry.ErrCancelled) {
				return Result{StatusCode: http.StatusGone}
			}
		}
		return Result{StatusCode: http.StatusOK}
	case ActionHeartbeat:
		res, inst := s.Renew(app, it.ID, registry.RenewRequest{
			LastDirtyTimestamp: it.LastDirtyTimestamp,
			OverriddenStatus:   eureka.ParseStatus(it.OverriddenStatus),
			Replication:        true,
		})
		switch res {
		case registry.RenewOK:
			return Result{StatusCode: http.StatusOK}
		case registry.RenewConflict:
			return Result{StatusCode: http.StatusConflict, Instance: inst}
		case registry.RenewCancelled:
			return Result{StatusCode: http.StatusGone}
		}
		return Result{StatusCode: http.StatusNotFound}
	case ActionCancel:
		if s.Cancel(app, it.ID, true) {
			return Result{StatusCode: http.StatusOK}
		}
		return Result{StatusCode: http.StatusNotFound}
	case ActionStatusUpdate:
		st, ok := eureka.LookupStatus(it.Status)
		if !ok {
			return Result{StatusCode: http.StatusInternalServerError}
		}
		return statusCode(s.SetStatus(app, it.ID, st, it.LastDirtyTimestamp, true))
	case ActionDeleteStatusOverride:
		if it.LastDirtyTimestamp == 0 {
			return Result{StatusCode: http.StatusInternalServerError}
		}
		st := eureka.StatusUnknown
		if it.Status != "" {
			var ok bool
			if st, ok = eureka.LookupStatus(it.Status); !ok {
				return Result{StatusCode: http.StatusInternalServerError}
			}
		}
		return statusCode(s.DeleteStatusOverride(app, it.ID, st, it.LastDirtyTimestamp, true))
	}
	return Result{StatusCode: http.StatusInternalServerError}
}

func statusCode(err error) Result {
	switch {
	case err == nil:
		return Result{StatusCode: http.StatusOK}
	case errors.Is(err, registry.ErrNotFound):
		return Result{StatusCode: http.StatusNotFound}
	}
	return Result{StatusCode: http.StatusInternalServerError}
}
