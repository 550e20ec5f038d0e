package eureka

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The differential fuzz targets feed the same input to the streaming
// decoders and to the reflection-based ones they replaced
// (legacydecode_test.go): both must give deep-equal results, or both an
// error of the same class.

func sameDecode[T any](t *testing.T, what string, data []byte, got T, gotErr error, want T, wantErr error) {
	t.Helper()
	switch {
	case gotErr != nil || wantErr != nil:
		if gotErr == nil || wantErr == nil || !errors.Is(gotErr, wantErr) {
			t.Fatalf("%s(%q): error %v, legacy error %v", what, data, gotErr, wantErr)
		}
	case !reflect.DeepEqual(got, want):
		t.Fatalf("%s(%q):\n got    %#v\n legacy %#v", what, data, got, want)
	}
}

// addDifferentialSeeds adds the golden documents, the registration bodies
// and the documents of the decode tests that end in suffix.
func addDifferentialSeeds(f *testing.F, suffix string, extra ...string) {
	for _, dir := range []string{"golden", "register"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*"+suffix))
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

func FuzzDifferentialJSON(f *testing.F) {
	addDifferentialSeeds(f, ".json",
		`{}`, `null`, `{"instance":null}`, `{"instance":{"port":"8"}}`, `{"metadata":{"@class":1}}`,
		`{"hostName":"h","app":"a","ipAddr":"1.2.3.4","status":"weird",
		"overriddenStatus":null,"port":{"$":"81","@enabled":"TRUE"},"countryId":"3",
		"leaseInfo":{"durationInSecs":"30","renewalTimestamp":"5"},"lastDirtyTimestamp":"12",
		"isCoordinatingDiscoveryServer":"true","metadata":{"n":1,"b":true,"s":"x","z":null}}`,
		`{"instance":`, `[1,2]`, `{"instance":{"port":{"$":"eighty"}}}`, `{"instance":{"hostName":{"a":1}}}`, `{"instance":"x"}`,
		`{"applications":{"versions__delta":7,"apps__hashcode":"UP_1_",
		"application":{"name":"orders","instance":{"hostName":"h","app":"ORDERS","ipAddr":"i","status":"UP",
		"actionType":"DELETED"}}}}`,
		`{"applications":{"apps__hashcode":""}}`,
		`{"applications":{"application":{"instance":{}}}}`,
		`{"INSTANCE":{"HOSTNAME":"h","hoſtName":"k","Port":5,"port":{"$":1,"@Enabled":false},"port":"7"},"instance":{"app":"x"}}`,
		`{"instance":{"dataCenterInfo":{"name":"amazon","metadata":{"instance-id":"i-1","@class":"x.EmptyMap"}},"dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","name":""}}}`,
		`{"instance":{"metadata":{"a":"\ud800\u00e9\"","b\u0041":"\xff","a":null},"leaseInfo":{"lastRenewalTimestamp":null,"renewalTimestamp":1.5e3}}}`,
		`{"application":{"name":"x","instance":[null,{"app":"y"}]},"application":{"name":"z"}}`,
		`{"applications":{"application":[null,{"name":"a","instance":null}],"versions__delta":" 12 "}}`,
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		i, err := DecodeInstanceJSON(data)
		li, lerr := legacyDecodeInstanceJSON(data)
		sameDecode(t, "DecodeInstanceJSON", data, i, err, li, lerr)
		a, err := DecodeApplicationJSON(data)
		la, lerr := legacyDecodeApplicationJSON(data)
		sameDecode(t, "DecodeApplicationJSON", data, a, err, la, lerr)
		as, err := DecodeApplicationsJSON(data)
		las, lerr := legacyDecodeApplicationsJSON(data)
		sameDecode(t, "DecodeApplicationsJSON", data, as, err, las, lerr)
	})
}

// The readers behind the XML decoders, one at a time: the scanner alone
// (handled false when it leaves the document to xmlTokens) and xmlTokens
// alone.
func scanInstanceXML(data []byte) (i *InstanceInfo, err error, handled bool) {
	d := &xmlDecoder{}
	var w xmlInstance
	if s := (xmlScanner{data: data, d: d}); s.root() && s.instance(&w) {
		i, err = d.finish(&w)
		return i, err, true
	}
	return nil, nil, false
}

func tokensInstanceXML(data []byte) (*InstanceInfo, error) {
	d := &xmlDecoder{}
	var w xmlInstance
	t := newXMLTokens(data, d)
	start, ok := t.root()
	if !ok || !t.instance(start, &w) {
		return nil, ErrCannotParse
	}
	return d.finish(&w)
}

func scanApplicationsXML(data []byte) (apps *Applications, err error, handled bool) {
	d := &xmlDecoder{}
	var w xmlApplications
	if s := (xmlScanner{data: data, d: d}); s.root() && s.applications(&w) {
		apps, err = w.result()
		return apps, err, true
	}
	return nil, nil, false
}

func tokensApplicationsXML(data []byte) (*Applications, error) {
	d := &xmlDecoder{}
	var w xmlApplications
	t := newXMLTokens(data, d)
	start, ok := t.root()
	if !ok || !t.applications(start, &w) {
		return nil, ErrCannotParse
	}
	return w.result()
}

func FuzzDifferentialXML(f *testing.F) {
	addDifferentialSeeds(f, ".xml",
		`<instance/>`, `<x><metadata><a>1</a></metadata></x>`, `<instance><port enabled="x">1</port></instance>`,
		`<instance><hostName>h</hostName><app>a</app><ipAddr>i</ipAddr>
		<status>out_of_service</status><overriddenStatus>down</overriddenStatus>
		<securePort enabled="yes">443</securePort><metadata class="java.util.Collections$EmptyMap"/></instance>`,
		`<instance>`, `<instance><port>x</port></instance>`, `not xml`,
		`<?xml version="1.0" encoding="UTF-8"?><!-- c --><instance><hostName><![CDATA[a<b]]></hostName></instance>`,
		`<i xmlns:a="urn:x"><a:hostName>h</a:hostName><metadata><a:k>v</a:k><b:k2>w</b:k2></metadata></i>`,
		"<instance>\r\n<hostName>a&amp;b&#x41;&#66;&lt;&gt;&quot;&apos;\r\rc</hostName>\n<port enabled=' FALSE '>8<x/>0</port></instance>trailing<<",
		`<instance><port enabled="false">1</port><port>2</port><dataCenterInfo class="com.netflix.appinfo.AmazonInfo"><name> </name></dataCenterInfo><dataCenterInfo><metadata><instance-id>i-1</instance-id><x__y_-z>1</x__y_-z></metadata></dataCenterInfo></instance>`,
		`<instance><leaseInfo><lastRenewalTimestamp> </lastRenewalTimestamp><renewalTimestamp>5</renewalTimestamp></leaseInfo><leaseInfo><durationInSecs>1.5e1</durationInSecs></leaseInfo><countryId>x</countryId><countryId>2</countryId></instance>`,
		`<applications><versions__delta> 3 </versions__delta><application><name> orders </name><instance><app>o</app></instance><instance/></application><application/></applications>`,
		"<instance><hostName>\xff</hostName></instance>", "<instance><hostName>]]></hostName></instance>",
		`<instance a="1"b='2' c = "&lt;>"><hostName >x</hostName ></instance >`,
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		li, lerr := legacyDecodeInstanceXML(data)
		i, err := DecodeInstanceXML(data)
		sameDecode(t, "DecodeInstanceXML", data, i, err, li, lerr)
		i, err = tokensInstanceXML(data)
		sameDecode(t, "tokensInstanceXML", data, i, err, li, lerr)
		if i, err, handled := scanInstanceXML(data); handled {
			sameDecode(t, "scanInstanceXML", data, i, err, li, lerr)
		}

		la, lerr := legacyDecodeApplicationXML(data)
		a, err := DecodeApplicationXML(data)
		sameDecode(t, "DecodeApplicationXML", data, a, err, la, lerr)

		las, lerr := legacyDecodeApplicationsXML(data)
		as, err := DecodeApplicationsXML(data)
		sameDecode(t, "DecodeApplicationsXML", data, as, err, las, lerr)
		as, err = tokensApplicationsXML(data)
		sameDecode(t, "tokensApplicationsXML", data, as, err, las, lerr)
		if as, err, handled := scanApplicationsXML(data); handled {
			sameDecode(t, "scanApplicationsXML", data, as, err, las, lerr)
		}
	})
}

// What servers and clients write must not need the slow reader.
func TestXMLScannerReadsWhatWeWrite(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*.xml"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _, okInstance := scanInstanceXML(data)
		_, _, okApps := scanApplicationsXML(data)
		if !okInstance || !okApps {
			t.Errorf("%s: the scanner gave up", name)
		}
	}
	doc := AppendApplicationsXML(nil, benchRegistry(100))
	if _, _, ok := scanApplicationsXML(doc); !ok {
		t.Error("the scanner gave up on a registry")
	}
}
