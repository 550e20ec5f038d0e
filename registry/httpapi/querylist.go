package httpapi

import (
	"net/http"

	"github.com/eurekagate/eurekagate/registry"
)

// appsOf reads the request's apps parameter (registry.Interest): has is
// whether it was given. It answers 400 for a list over the bounds
// (registry.MaxQueryListBytes, MaxQueryListNames), as regionsOf does for
// regions=, and returns false then.
func appsOf(req *Request, resp *Response) (apps []string, has, ok bool) {
	list, has := req.Query.Get(ParamApps)
	if !has {
		return nil, false, true
	}
	apps, err := registry.Interest(list)
	if err != nil {
		listRefused(resp, err)
		return nil, true, false
	}
	return apps, true, true
}

// listRefused answers a query list refused by its bounds (a
// *registry.ListTooLongError): 400, with the parameter and the bound it
// passed.
func listRefused(resp *Response, err error) {
	resp.text(http.StatusBadRequest, err.Error())
}
