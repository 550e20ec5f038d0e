module github.com/eurekagate/eurekagate

go 1.26.0
