/*
 * Simulation-only probe that ends simulation in each of the ways RTL can: the tests check that
 * each reaches the Rust caller as an error instead of ending the process.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fatal_probe #
(
    // Number of clock cycles between trigger and the error, to show the error's time is kept
    parameter DELAY = 3
)
(
    input  wire        clk,
    // Arms the probe; the error fires DELAY cycles later
    input  wire        trigger,
    // Which error: 0 $fatal, 1 $error, 2 $stop, 3 failed immediate assertion, 4 $finish
    input  wire [2:0]  kind,
    // Cycles counted since time zero
    output reg  [31:0] cycles = 32'd0
);

// check configuration
initial begin
    if (DELAY < 1) begin
        $error("Error: DELAY must be at least 1 (instance %m)");
        $finish;
    end
end

localparam [2:0]
    KIND_FATAL  = 3'd0,
    KIND_ERROR  = 3'd1,
    KIND_STOP   = 3'd2,
    KIND_ASSERT = 3'd3,
    KIND_FINISH = 3'd4;

reg [31:0] countdown = 32'd0;
reg assert_ok = 1'b1;

always @(posedge clk) begin
    cycles <= cycles + 32'd1;
    assert_ok <= 1'b1;
    if (trigger && countdown == 32'd0) begin
        countdown <= DELAY;
    end else if (countdown > 32'd1) begin
        countdown <= countdown - 32'd1;
    end else if (countdown == 32'd1) begin
        countdown <= 32'd0;
        case (kind)
            KIND_FATAL:  $fatal(1, "fatal_probe: fatal after %0d cycles", cycles);
            KIND_ERROR:  $error("fatal_probe: error after %0d cycles", cycles);
            KIND_STOP:   $stop;
            KIND_ASSERT: assert_ok <= 1'b0;
            KIND_FINISH: $finish;
            default:     ;
        endcase
    end
    // An immediate assertion on registered state, as a protocol checker would write it.
    assert (assert_ok) else $error("fatal_probe: assertion assert_ok failed");
end

endmodule

`resetall
