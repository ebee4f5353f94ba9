/** Random fault schedules, seeds 25–36 (split in files so the runner can use both cores). */
import { randomSuite } from './framework/random-suite.js';

randomSuite(25, 37);
