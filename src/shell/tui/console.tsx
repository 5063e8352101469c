/**
 * Starts the console on a terminal: the data layer connected, the app rendered full-screen (the
 * terminal's alternate screen, restored on exit), resized with the terminal. Ink's own render is
 * throttled (`maxFps`) on top of the data layer's throttle, so a burst of fires costs a few frames a
 * second, and keys are read between them.
 */
import { render } from "ink";
import { useEffect, useState } from "react";
import { App } from "./components/app.js";
import { ConsoleData, type ConsoleDataOptions } from "./console-data.js";
import type { TuiText } from "./text.js";

export interface ConsoleOptions extends ConsoleDataOptions {
  readonly text: TuiText;
  readonly color: boolean;
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
}

function Sized(props: {
  readonly data: ConsoleData;
  readonly text: TuiText;
  readonly color: boolean;
  readonly stdout: NodeJS.WriteStream;
}) {
  const size = () => ({ width: props.stdout.columns || 80, height: props.stdout.rows || 24 });
  const [s, setS] = useState(size);
  useEffect(() => {
    const onResize = () => setS(size());
    props.stdout.on("resize", onResize);
    return () => {
      props.stdout.off("resize", onResize);
    };
  });
  return <App data={props.data} text={props.text} color={props.color} width={s.width} height={s.height} />;
}

/** Runs the console until the operator quits; resolves then. */
export async function runConsole(options: ConsoleOptions): Promise<void> {
  const data = new ConsoleData(options);
  data.start();
  const { stdout } = options;
  stdout.write("\u001b[?1049h\u001b[H");
  try {
    const ink = render(<Sized data={data} text={options.text} color={options.color} stdout={stdout} />, {
      stdin: options.stdin,
      stdout,
      exitOnCtrlC: true,
      patchConsole: false,
      maxFps: 20,
    });
    await ink.waitUntilExit();
  } finally {
    await data.stop();
    stdout.write("\u001b[?1049l");
  }
}
