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
		differ(t, "DecodeInstanceJSON", data, DecodeInstanceJSON, legacyDecodeInstanceJSON)
		differ(t, "DecodeApplicationJSON", data, DecodeApplicationJSON, legacyDecodeApplicationJSON)
		differ(t, "DecodeApplicationsJSON", data, DecodeApplicationsJSON, legacyDecodeApplicationsJSON)
	})
}

// differ decodes data with decode and with the legacy decoder, which must
// agree.
func differ[T any](t *testing.T, what string, data []byte, decode, legacy func([]byte) (T, error)) {
	t.Helper()
	got, err := decode(data)
	want, wantErr := legacy(data)
	sameDecode(t, what, data, got, err, want, wantErr)
}

// differXML is differ for an XML decoder, and for the readers behind it
// one at a time: the scanner alone, when it does not give up and leave the
// document to encoding/xml, and encoding/xml's tokens alone.
func differXML[T any](t *testing.T, what string, data []byte, decode func([]byte) (T, error),
	read func(*xmlDecoder) (T, bool), legacy func([]byte) (T, error)) {
	t.Helper()
	want, wantErr := legacy(data)
	got, err := decode(data)
	sameDecode(t, what, data, got, err, want, wantErr)
	if got, ok := readXML(data, false, read); ok {
		sameDecode(t, what+" (scanner)", data, got, nil, want, wantErr)
	}
	got, ok := readXML(data, true, read)
	if err = nil; !ok {
		err = ErrCannotParse
	}
	sameDecode(t, what+" (encoding/xml)", data, got, err, want, wantErr)
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
		differXML(t, "DecodeInstanceXML", data, DecodeInstanceXML, (*xmlDecoder).instanceDocument, legacyDecodeInstanceXML)
		differ(t, "DecodeApplicationXML", data, DecodeApplicationXML, legacyDecodeApplicationXML)
		differXML(t, "DecodeApplicationsXML", data, DecodeApplicationsXML, (*xmlDecoder).applicationsDocument, legacyDecodeApplicationsXML)
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
		_, okInstance := readXML(data, false, (*xmlDecoder).instanceDocument)
		_, okApps := readXML(data, false, (*xmlDecoder).applicationsDocument)
		if !okInstance || !okApps {
			t.Errorf("%s: the scanner gave up", name)
		}
	}
	doc := AppendApplicationsXML(nil, benchRegistry(100))
	if _, ok := readXML(doc, false, (*xmlDecoder).applicationsDocument); !ok {
		t.Error("the scanner gave up on a registry")
	}
}
