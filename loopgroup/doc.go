// Package loopgroup runs groups of event loops: Netty's EventLoopGroup,
// its choosers, the server bootstrap with boss and worker reactors, and
// executor groups for blocking work.
package loopgroup
