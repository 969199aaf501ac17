package main

func Example() {}

func main() {}
