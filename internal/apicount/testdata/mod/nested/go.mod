module example.com/fixture/nested

go 1.26
