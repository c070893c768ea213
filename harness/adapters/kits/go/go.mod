module locklab/kits/go

go 1.22
